import Foundation
import HearthCore
import HearthTesting
import Testing
import HearthServer

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

    /// Reloading the rules file decides every open target again with the rules now in force (`get` for a
    /// document, `list` over the query's constraints for a query); those no longer allowed end with
    /// `permission-denied`, the others and the connection carry on.
    @Test func reloadedRulesDecideOpenTargetsAgain() async throws {
        let before = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /notes/{id} {
                  allow get, list: if request.auth != null && resource.data.owner == request.auth.uid;
                }
                match /pub/{id} { allow read: if true; }
              }
            }
            """
        // Notes can no longer be read one by one, and only be listed a few at a time.
        let after = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /notes/{id} {
                  allow list: if request.auth != null && resource.data.owner == request.auth.uid && request.query.limit <= 5;
                }
                match /pub/{id} { allow read: if true; }
              }
            }
            """
        let file = try RulesHTTPTests.writeRules(before)
        try await TestServer.with(configure: {
            $0.rulesFile = file
            $0.rulesPollInterval = .milliseconds(50)
            $0.useTestAccounts()
        }) { server, client in
            let ann = try await client.signedUp("ann@example.com", "a long enough password")
            _ = try await client.put("/v1/docs/notes/n1", #"{"owner": "\#(ann.uid)"}"#)
            _ = try await client.put("/v1/docs/pub/p1", #"{"v": 1}"#)
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(ann.token))
            let mine = #"[["owner", "==", "\#(ann.uid)"]]"#
            try await ws.listen("doc", doc: "notes/n1")
            try await ws.listen("all", query: #"{"from": "notes", "where": \#(mine)}"#)
            try await ws.listen("few", query: #"{"from": "notes", "where": \#(mine), "limit": 5}"#)
            try await ws.listen("pub", doc: "pub/p1")
            for _ in 0..<4 { try await ws.expect("snapshot") }
            // The admin's listeners bypass rules, before and after.
            let admin = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            try await admin.listen("doc", doc: "notes/n1")
            try await admin.expect("snapshot", id: "doc")

            try after.write(toFile: file, atomically: true, encoding: .utf8)
            var ended: [String: String] = [:]
            for _ in 0..<2 {
                let frame = try await ws.expect("error", timeout: .seconds(10))
                ended[frame["id"]?.stringValue ?? "?"] = frame["code"]?.stringValue
            }
            #expect(ended == ["doc": "permission-denied", "all": "permission-denied"])

            // The connection is open and the allowed targets still follow their results.
            _ = try await client.put("/v1/docs/pub/p1", #"{"v": 2}"#)
            #expect(try await ws.expectChange("modified", of: "pub/p1", id: "pub")["data"]?["v"] == .int(2))
            _ = try await client.put("/v1/docs/notes/n2", #"{"owner": "\#(ann.uid)"}"#)
            _ = try await ws.expectChange("added", of: "notes/n2", id: "few")
            #expect(await ws.isQuiet())
            #expect(!ws.isClosed)
            // A target added now is decided by the new rules too.
            try await ws.listen("doc", doc: "notes/n1")
            #expect(try await ws.expect("error", id: "doc")["code"] == .string("permission-denied"))
            #expect(await admin.isQuiet())
            await ws.close()
            await admin.close()
        }
    }

    /// Changing an account's claims changes the identity its open listeners act as: their targets are
    /// decided again with the new claims, and later changes are checked with them.
    @Test func claimsChangedByTheAdminDecideOpenTargetsAgain() async throws {
        let rules = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /reports/{id} {
                  allow get, list: if request.auth.token.role == 'editor';
                }
              }
            }
            """
        let file = try RulesHTTPTests.writeRules(rules)
        try await TestServer.with(configure: { $0.rulesFile = file; $0.useTestAccounts() }) { server, client in
            let ann = try await client.signedUp("ann@example.com", "a long enough password")
            _ = try await client.put("/v1/docs/reports/r1", #"{"text": "hi"}"#)
            #expect(try await client.put("/v1/admin/users/\(ann.uid)/claims", #"{"claims": {"role": "editor"}}"#).status == 200)
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(ann.token))
            try await ws.listen("doc", doc: "reports/r1")
            try await ws.expect("snapshot", id: "doc")
            try await ws.listen("all", query: #"{"from": "reports"}"#)
            try await ws.expect("snapshot", id: "all")

            // The role goes: both targets end at once, before any change to the reports.
            #expect(try await client.put("/v1/admin/users/\(ann.uid)/claims", #"{"claims": {}}"#).status == 200)
            var ended: [String: String] = [:]
            for _ in 0..<2 {
                let frame = try await ws.expect("error")
                ended[frame["id"]?.stringValue ?? "?"] = frame["code"]?.stringValue
            }
            #expect(ended == ["doc": "permission-denied", "all": "permission-denied"])
            // The connection carries on, with the new identity: a target the new claims allow still opens.
            try await ws.listen("again", query: #"{"from": "reports", "limit": 1}"#)
            #expect(try await ws.expect("error", id: "again")["code"] == .string("permission-denied"))
            #expect(try await client.put("/v1/admin/users/\(ann.uid)/claims", #"{"claims": {"role": "editor"}}"#).status == 200)
            // The new identity reaches the connection through the feed, a moment after the answer.
            var opened = false
            for k in 0..<100 where !opened {
                try await ws.listen("back\(k)", doc: "reports/r1")
                let frame = try await ws.next()
                opened = frame["type"] == .string("snapshot")
                if !opened { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(opened && !ws.isClosed)
        }
    }
}
