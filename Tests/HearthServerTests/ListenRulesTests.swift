import HearthCore
import HearthTesting
import Testing

/// Live updates under security rules and accounts, end to end: a user's token opens the connection, rules
/// decide each target when added and each change of a document target, and logging out ends the listeners.
@Suite struct ListenRulesTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{id} {
              allow get, list: if request.auth != null && resource.data.owner == request.auth.uid;
            }
          }
        }
        """

    @Test func rulesDecideEachTargetAndEachChangeAndLogoutEndsTheConnection() async throws {
        let file = try RulesHTTPTests.writeRules(Self.rules)
        try await TestServer.with(configure: { $0.rulesFile = file; $0.useTestAccounts() }) { server, client in
            let ann = try await client.signedUp("ann@example.com", "a long enough password")
            _ = try await client.put("/v1/docs/notes/n1", #"{"owner": "\#(ann.uid)", "text": "hi"}"#)
            _ = try await client.put("/v1/docs/notes/n2", #"{"owner": "someone-else"}"#)
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(ann.token))
            try await ws.listen("mine", doc: "notes/n1")
            try await ws.expect("snapshot", id: "mine")
            try await ws.listen("theirs", doc: "notes/n2")
            #expect(try await ws.expect("error", id: "theirs")["code"] == .string("permission-denied"))
            // Rules are not filters: a query that could return others' notes is refused whole.
            try await ws.listen("all", query: #"{"from": "notes"}"#)
            #expect(try await ws.expect("error", id: "all")["code"] == .string("permission-denied"))
            try await ws.listen("q", query: #"{"from": "notes", "where": [["owner", "==", "\#(ann.uid)"]]}"#)
            try await ws.expect("snapshot", id: "q")
            #expect(ws.views["q"]?.map(\.path.id) == ["n1"])

            // The note changes hands: the query drops it, the document target is no longer readable.
            _ = try await client.patch("/v1/docs/notes/n1", #"{"owner": "bob"}"#)
            var seen: [String: String] = [:]
            for _ in 0..<2 {
                let frame = try await ws.next()
                seen[frame["id"]?.stringValue ?? "?"] = frame["type"] == .string("error") ? frame["code"]?.stringValue : "snapshot"
            }
            #expect(seen == ["mine": "permission-denied", "q": "snapshot"])
            #expect(ws.views["q"] == [])

            // Logging out revokes the session, and with it the connection it opened.
            let out = try await client.post("/v1/auth/logout", as: .token(ann.token))
            #expect((200..<300).contains(out.status))
            #expect(try await ws.expect("error")["code"] == .string("unauthenticated"))
            while !ws.isClosed { try await Task.sleep(for: .milliseconds(10)) }
            #expect(ws.closeCode == 1008)
        }
    }
}
