import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import HTTPTypes
import Testing
import HearthServer

/// Security rules guard every endpoint of the HTTP API. Callers here are the admin and unauthenticated
/// clients; a case names its caller, so signed-in users' tokens slot into the same table.
@Suite struct RulesHTTPTests {
    static let rules = """
        rules_version = '2';
        // Public posts anyone reads; a guest book anyone signs; everything else closed.
        service cloud.firestore {
          match /databases/{database}/documents {
            match /posts/{postId} {
              allow get: if resource.data.public == true;
              allow list: if resource.data.public == true && request.query.limit <= 20;
              match /comments/{commentId} {
                allow read;
              }
            }
            match /guestbook/{entryId} {
              allow create: if request.resource.data.keys().hasOnly(['name', 'at'])
                && request.resource.data.at == request.time;
            }
          }
        }
        """

    struct Case: Sendable, CustomTestStringConvertible {
        let method: String
        let uri: String
        let body: String?
        let caller: Caller
        let status: Int
        var testDescription: String { "\(method) \(uri) -> \(status)" }
    }

    /// Every endpoint, allowed and denied, for guests; the admin passes everywhere.
    static let cases: [Case] = [
        Case(method: "GET", uri: "/v1/docs/posts/open", body: nil, caller: .nobody, status: 200),
        Case(method: "GET", uri: "/v1/docs/posts/closed", body: nil, caller: .nobody, status: 403),
        Case(method: "GET", uri: "/v1/docs/posts/missing", body: nil, caller: .nobody, status: 403),
        Case(method: "GET", uri: "/v1/docs/posts?pageSize=20", body: nil, caller: .nobody, status: 403),
        Case(method: "GET", uri: "/v1/docs/posts/open/comments?pageSize=5", body: nil, caller: .nobody, status: 200),
        Case(method: "GET", uri: "/v1/docs/posts/open/comments/c1", body: nil, caller: .nobody, status: 200),
        Case(method: "POST", uri: "/v1/docs/guestbook", body: #"{"name": "Ann", "at": {"$serverTimestamp": true}}"#, caller: .nobody, status: 201),
        Case(method: "POST", uri: "/v1/docs/guestbook", body: #"{"name": "Ann", "spam": true, "at": {"$serverTimestamp": true}}"#, caller: .nobody, status: 403),
        Case(method: "PUT", uri: "/v1/docs/guestbook/mine", body: #"{"name": "Ann", "at": {"$serverTimestamp": true}}"#, caller: .nobody, status: 200),
        Case(method: "PUT", uri: "/v1/docs/posts/open", body: #"{"public": true}"#, caller: .nobody, status: 403),
        Case(method: "PATCH", uri: "/v1/docs/posts/open", body: #"{"title": "x"}"#, caller: .nobody, status: 403),
        Case(method: "DELETE", uri: "/v1/docs/posts/open", body: nil, caller: .nobody, status: 403),
        Case(method: "DELETE", uri: "/v1/docs/posts/open?recursive=true", body: nil, caller: .nobody, status: 403),
        Case(method: "POST", uri: "/v1/commit",
             body: #"{"writes": [{"create": "guestbook/a", "data": {"name": "A", "at": {"$serverTimestamp": true}}}]}"#, caller: .nobody, status: 200),
        Case(method: "POST", uri: "/v1/commit",
             body: #"{"writes": [{"create": "guestbook/b", "data": {"name": "B", "at": {"$serverTimestamp": true}}}, {"delete": "posts/open"}]}"#,
             caller: .nobody, status: 403),
        Case(method: "POST", uri: "/v1/commit", body: #"{"writes": [{"verify": "posts/closed", "precondition": {"exists": true}}]}"#, caller: .nobody, status: 403),
        Case(method: "GET", uri: "/v1/collections", body: nil, caller: .nobody, status: 403),
        // Listing collection ids is the admin's alone, as in Firestore: a rule that allows every list does not open it.
        Case(method: "GET", uri: "/v1/collections/posts/open", body: nil, caller: .nobody, status: 403),
    ]

    static func seed(_ client: HearthClient) async throws {
        for (path, body) in [("posts/open", #"{"public": true, "title": "hi"}"#), ("posts/closed", #"{"public": false}"#),
                             ("posts/open/comments/c1", #"{"text": "first"}"#)] {
            #expect(try await client.put("/v1/docs/\(path)", body).status == 200)
        }
    }

    static func writeRules(_ text: String) throws -> String {
        let path = TestFolders.make() + "/app.rules"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func send(_ client: HearthClient, _ c: Case) async throws -> HTTPResult {
        try await client.request(.init(c.method)!, c.uri, body: c.body.map { Array($0.utf8) }, as: c.caller)
    }

    @Test func everyEndpointIsGuardedByTheRules() async throws {
        let file = try Self.writeRules(Self.rules)
        try await TestServer.with(configure: { $0.rulesFile = file }) { _, client in
            try await Self.seed(client)
            for c in Self.cases {
                let result = try await Self.send(client, c)
                #expect(result.status == c.status, "\(c.testDescription): \(result.text)")
                if c.status == 403 {
                    #expect(result.errorCode == "permission-denied")
                    #expect(result.errorMessage == "Missing or insufficient permissions.")
                }
            }
            // Nothing denied was written.
            #expect(try await client.get("/v1/docs/posts/open").status == 200)
            #expect(try await client.get("/v1/docs/guestbook/b").status == 404)
            // The admin passes everywhere.
            for c in Self.cases {
                let admin = Case(method: c.method, uri: c.uri, body: c.body, caller: .admin, status: 0)
                let result = try await Self.send(client, admin)
                // Rules never stop the admin; a write may still meet a precondition (a create of an existing document).
                #expect(![401, 403].contains(result.status) && result.status < 500, "\(admin.testDescription): \(result.text)")
            }
        }
    }

    /// Rules for `/notes/{id}` with the given `allow` statements, where `open()` reads `settings/app` with `get()`.
    static func notesRules(_ allows: String) -> String {
        """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            function open() { return get(/databases/$(database)/documents/settings/app).data.open == true; }
            match /notes/{id} {
              \(allows)
            }
          }
        }
        """
    }

    /// A document that rules read with `get()` on every request decides each request by its latest
    /// committed state, on reads (answered on the event loop) and on writes, however often it changes.
    @Test func rulesSeeEachChangeOfTheDocumentsTheyGet() async throws {
        let file = try Self.writeRules(Self.notesRules("""
            allow get: if open() && resource.data.shown == true;
            allow create: if open();
            """))
        try await TestServer.with(configure: { $0.rulesFile = file }) { _, client in
            #expect(try await client.put("/v1/docs/notes/n", #"{"shown": true}"#).status == 200)
            for round in 0..<20 {
                let open = round % 3 != 1
                #expect(try await client.put("/v1/docs/settings/app", #"{"open": \#(open)}"#).status == 200)
                let read = try await client.get("/v1/docs/notes/n", as: .nobody)
                #expect(read.status == (open ? 200 : 403), "round \(round): \(read.text)")
                let create = try await client.post("/v1/docs/notes", #"{"shown": false}"#, as: .nobody)
                #expect(create.status == (open ? 201 : 403), "round \(round): \(create.text)")
                // Flipped again by a commit of several writes.
                let commit = try await client.post("/v1/commit", """
                    {"writes": [{"set": "settings/app", "data": {"open": \(!open)}}, {"create": "notes/c\(round)", "data": {}}]}
                    """)
                #expect(commit.status == 200)
                let guest = try await client.post("/v1/docs/notes", "{}", as: .nobody)
                #expect(guest.status == (!open ? 201 : 403), "round \(round) after the commit: \(guest.text)")
            }
        }
    }

    /// Reads decided again by a kept decision (the same caller reading the same unchanged document) follow
    /// every change of what the rules read, on the next request: the document read, a document the rules
    /// `get()`, and who the caller is.
    @Test func keptReadDecisionsFollowEveryChange() async throws {
        let file = try Self.writeRules(Self.notesRules(
            "allow get: if open() && (resource.data.shared == true || resource.data.owner == request.auth.uid);"))
        let hearth = try await Harness.start(rules: file, fixture: FixtureFile())
        do {
            let admin = hearth.client()
            let guest = hearth.client(as: .nobody)
            let alice = try await hearth.user("alice").client
            let bob = try await hearth.user("bob").client
            func write(_ path: String, _ json: String) async throws {
                #expect(try await admin.put("/v1/docs/\(path)", json).status == 200)
            }
            // Alice, Bob and a guest read notes a and b.
            func reads() async throws -> [Int] {
                var out: [Int] = []
                for client in [alice, bob, guest] {
                    for note in ["a", "b"] { out.append(try await client.get("/v1/docs/notes/\(note)").status) }
                }
                return out
            }
            func reused() async throws -> Double {
                let text = try await admin.get("/metrics").text
                let line = text.split(separator: "\n").first { $0.hasPrefix("hearth_rules_read_decisions_reused ") }
                return line.flatMap { Double($0.split(separator: " ")[1]) } ?? -1
            }
            try await write("settings/app", #"{"open": true}"#)
            try await write("notes/a", #"{"owner": "alice", "shared": false}"#)
            try await write("notes/b", #"{"owner": "bob", "shared": true}"#)
            for _ in 0..<3 { #expect(try await reads() == [200, 200, 403, 200, 403, 200]) }
            // Six distinct caller and note pairs decided once each, then twice again from what was kept.
            #expect(try await reused() == 12)

            // The document read changes.
            try await write("notes/a", #"{"owner": "alice", "shared": true}"#)
            for _ in 0..<2 { #expect(try await reads() == [200, 200, 200, 200, 200, 200]) }
            try await write("notes/b", #"{"owner": "carol", "shared": false}"#)
            for _ in 0..<2 { #expect(try await reads() == [200, 403, 200, 403, 200, 403]) }
            // The document the rules `get()` changes, then goes, then comes back.
            try await write("settings/app", #"{"open": false}"#)
            #expect(try await reads() == [403, 403, 403, 403, 403, 403])
            #expect(try await admin.delete("/v1/docs/settings/app").status == 204)
            #expect(try await reads() == [403, 403, 403, 403, 403, 403])
            try await write("settings/app", #"{"open": true}"#)
            #expect(try await reads() == [200, 403, 200, 403, 200, 403])
            // The document read goes.
            #expect(try await admin.delete("/v1/docs/notes/a").status == 204)
            #expect(try await reads() == [403, 403, 403, 403, 403, 403])
            #expect(try await reused() > 12)
            await hearth.stop()
        } catch {
            await hearth.stop()
            throw error
        }
    }

    /// A document the rules `get()` is found by its id's bytes: an id that Swift's `==` holds equal to another
    /// (`é` precomposed, and `e` with a combining accent) reads its own document, never the other's.
    @Test func rulesGetDocumentsByTheirIdsBytes() async throws {
        let file = try Self.writeRules("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /notes/{id} {
                  allow get: if get(/databases/$(database)/documents/flags/$(id)).data.on == true;
                }
              }
            }
            """)
        try await TestServer.with(configure: { $0.rulesFile = file }) { _, client in
            let composed = "caf%C3%A9", decomposed = "cafe%CC%81"
            for (id, on) in [(composed, true), (decomposed, false)] {
                let flag = try await client.put("/v1/docs/flags/\(id)", "{\"on\": \(on)}")
                let note = try await client.put("/v1/docs/notes/\(id)", "{}")
                #expect(flag.status == 200 && note.status == 200)
            }
            for _ in 0..<3 {
                let allowed = try await client.get("/v1/docs/notes/\(composed)", as: .nobody)
                let denied = try await client.get("/v1/docs/notes/\(decomposed)", as: .nobody)
                #expect(allowed.status == 200 && denied.status == 403, "\(allowed.text) \(denied.text)")
            }
        }
    }

    @Test func readsUnderATransactionAreChecked() async throws {
        let file = try Self.writeRules(Self.rules)
        try await TestServer.with(configure: { $0.rulesFile = file }) { _, client in
            try await Self.seed(client)
            let begin = try await client.post("/v1/transactions", "{}", as: .nobody)
            #expect(begin.status == 201)
            let tx = begin.json?["transaction"]?.stringValue ?? ""
            #expect(try await client.get("/v1/docs/posts/open?transaction=\(tx)", as: .nobody).status == 200)
            #expect(try await client.get("/v1/docs/posts/closed?transaction=\(tx)", as: .nobody).status == 403)
        }
    }

    @Test func devModeNamesTheDecidingRule() async throws {
        let file = try Self.writeRules(Self.rules)
        try await TestServer.with(configure: { $0.rulesFile = file; $0.dev = true }) { _, client in
            try await Self.seed(client)
            let result = try await client.get("/v1/docs/posts/closed", as: .nobody)
            #expect(result.status == 403)
            let message = result.errorMessage ?? ""
            #expect(message.contains("app.rules:6:"), "\(message)")
            #expect(message.contains("resource.data.public == true"), "\(message)")
            let unmatched = try await client.get("/v1/docs/nowhere/x", as: .nobody)
            #expect(unmatched.errorMessage?.contains("no rule matched") == true)
        }
    }

    @Test func withoutRulesOnlyTheAdminKeyWorks() async throws {
        try await TestServer.with { _, client in
            try await Self.seed(client)
            for c in Self.cases {
                let result = try await Self.send(client, c)
                #expect(result.status == 403, "\(c.testDescription): \(result.text)")
            }
            #expect(try await client.get("/v1/docs/posts/closed").status == 200)
        }
    }
}
