import Foundation
import HearthCore
@testable import HearthEngine
import HearthRules
import HearthStore
import HearthTesting
import Testing
import Logging

/// Rules enforced by the engine on every operation, for signed-in users, guests and the admin.
@Suite struct RulesEnforcementTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            function signedIn() { return request.auth != null; }
            match /notes/{noteId} {
              allow get: if signedIn() && resource.data.owner == request.auth.uid;
              allow list: if signedIn() && resource.data.owner == request.auth.uid && request.query.limit <= 10;
              allow create: if request.resource.data.owner == request.auth.uid
                && request.resource.data.at == request.time;
              allow update: if resource.data.owner == request.auth.uid
                && request.resource.data.owner == resource.data.owner;
              allow delete: if resource.data.owner == request.auth.uid;
              match /items/{itemId} {
                allow delete: if get(/databases/$(database)/documents/notes/$(noteId)).data.owner == request.auth.uid
                  && resource.data.get('locked', false) != true;
                allow list: if signedIn();
              }
            }
            match /rooms/{roomId} {
              allow create: if request.resource.data.owner == request.auth.uid;
              match /members/{uid} {
                allow create: if getAfter(/databases/$(database)/documents/rooms/$(roomId)).data.owner == request.auth.uid
                  && existsAfter(/databases/$(database)/documents/rooms/$(roomId));
              }
            }
            match /open/{id} { allow read; }
          }
        }
        """

    static let documents = [
        "notes/a1": #"{"owner": "alice", "text": "mine"}"#,
        "notes/b1": #"{"owner": "bob", "text": "his"}"#,
        "notes/a1/items/i1": #"{"n": 1}"#,
        "notes/a1/items/i2": #"{"n": 2}"#,
        "notes/a1/items/i2/parts/p1": #"{"n": 3}"#,
    ]

    let alice = Identity.testUser("alice")
    let bob = Identity.testUser("bob")

    static func isDenied(_ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            return false
        } catch let error as HearthError {
            return error.code == .permissionDenied
        } catch {
            return false
        }
    }

    static func write(_ json: String) throws -> Write { try Write(json: JSON.parse(json)) }

    @Test func withoutRulesOnlyTheAdminPasses() async throws {
        try await TestDatabase.with(rules: nil, documents: Self.documents) { db in
            let path = try DocumentPath("notes/a1")
            #expect(try await db.get(path, as: .admin) != nil)
            for identity in [Identity.unauthenticated, alice] {
                do {
                    _ = try await db.get(path, as: identity)
                    Issue.record("read without rules")
                } catch let error as HearthError {
                    #expect(error.code == .permissionDenied)
                    #expect(error.message.contains("--rules"))
                }
                #expect(await Self.isDenied { _ = try await db.list(CollectionPath("notes"), pageSize: 5, pageToken: nil, as: identity) })
                #expect(await Self.isDenied { _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"delete": "notes/a1"}"#)]), as: identity) })
                #expect(await Self.isDenied { _ = try await db.collectionIDs(under: nil, as: identity) })
            }
        }
    }

    @Test func getFollowsTheRuleAndTheAdminBypasses() async throws {
        try await TestDatabase.with(rules: Self.rules, documents: Self.documents) { db in
            #expect(try await db.get(DocumentPath("notes/a1"), as: alice) != nil)
            #expect(await Self.isDenied { _ = try await db.get(DocumentPath("notes/b1"), as: alice) })
            #expect(await Self.isDenied { _ = try await db.get(DocumentPath("notes/a1"), as: .unauthenticated) })
            // A missing document: `resource` is null, so `resource.data` is an error, which denies.
            #expect(await Self.isDenied { _ = try await db.get(DocumentPath("notes/zz"), as: alice) })
            #expect(try await db.get(DocumentPath("notes/b1"), as: .admin) != nil)
            #expect(try await db.get(DocumentPath("open/missing"), as: .unauthenticated) == nil)
            // Under a transaction, too.
            let tx = try await db.beginTransaction(as: alice)
            #expect(try await db.get(DocumentPath("notes/a1"), as: alice, transaction: tx) != nil)
            #expect(await Self.isDenied { _ = try await db.get(DocumentPath("notes/b1"), as: alice, transaction: tx) })
            // The listener's per-document check is the same get rule.
            let stored = try db.storage.pointRead { try $0.document(at: DocumentPath("notes/b1")) }
            try db.authorizeRead(path: DocumentPath("notes/b1"), document: stored, identity: bob)
            #expect(await Self.isDenied { try db.authorizeRead(path: DocumentPath("notes/b1"), document: stored, identity: alice) })
        }
    }

    @Test func devModeNamesTheDecidingRuleOtherwiseTheMessageIsGeneric() async throws {
        for dev in [true, false] {
            try await TestDatabase.with(rules: Self.rules, dev: dev, documents: Self.documents) { db in
                do {
                    _ = try await db.get(DocumentPath("notes/b1"), as: alice)
                    Issue.record("allowed")
                } catch let error as HearthError {
                    #expect(error.code == .permissionDenied)
                    if dev {
                        #expect(error.message.contains("test.rules:6:"))
                        #expect(error.message.contains("resource.data.owner == request.auth.uid"))
                    } else {
                        #expect(error.message == "Missing or insufficient permissions.")
                    }
                }
            }
        }
    }

    @Test func listingIsAListWithThePageSizeAsLimit() async throws {
        try await TestDatabase.with(rules: Self.rules, documents: Self.documents) { db in
            // Rules are not filters: nothing pins the owner of every listed note.
            #expect(await Self.isDenied { _ = try await db.list(CollectionPath("notes"), pageSize: 5, pageToken: nil, as: alice) })
            let items = try await db.list(CollectionPath("notes/a1/items"), pageSize: 5, pageToken: nil, as: alice)
            #expect(items.documents.count == 2)
            // Queries: pinned by ==, limits checked.
            let mine = try Query(jsonText: #"{"from": "notes", "where": [["owner", "==", "alice"]], "limit": 10}"#)
            try db.authorizeQuery(mine, alice)
            let tooMany = try Query(jsonText: #"{"from": "notes", "where": [["owner", "==", "alice"]], "limit": 11}"#)
            #expect(await Self.isDenied { try db.authorizeQuery(tooMany, alice) })
            let theirs = try Query(jsonText: #"{"from": "notes", "where": [["owner", "in", ["alice", "bob"]]], "limit": 5}"#)
            #expect(await Self.isDenied { try db.authorizeQuery(theirs, alice) })
            try db.authorizeQuery(theirs, .admin)
        }
    }

    @Test func listConstraintsPinEqualityInAndOr() throws {
        let q = try Query(jsonText: """
            {"from": "c", "where": {"and": [{"field": "a", "op": "in", "value": [1, 2]},
             {"or": [{"field": "b", "op": "==", "value": "x"}, {"field": "c", "op": ">", "value": 0}]}]},
             "orderBy": [{"field": "c", "direction": "desc"}], "limit": 7, "offset": 2}
            """)
        let c = Database.listConstraints(for: q)
        #expect(c.limit == 7 && c.offset == 2)
        #expect(c.orderBy == [ListConstraints.Order(field: FieldPath(uncheckedSegments: ["c"]), descending: true)])
        let a = FieldPath(uncheckedSegments: ["a"]), b = FieldPath(uncheckedSegments: ["b"])
        // Each number pinned in both forms a document may hold it (`RulesNumberPinTests`).
        #expect(c.disjuncts.count == 8)
        #expect(c.disjuncts.contains([a: .int(1), b: .string("x")]))
        #expect(c.disjuncts.contains([a: .double(1), b: .string("x")]))
        #expect(c.disjuncts.contains([a: .int(2)]))
        #expect(c.disjuncts.contains([a: .double(2)]))
    }

    @Test func setIsCreateOrUpdateByExistenceWithTheMergedDocumentAndCommitTime() async throws {
        try await TestDatabase.with(rules: Self.rules, documents: Self.documents) { db in
            // Create: the server timestamp equals request.time.
            _ = try await db.commit(CommitRequest(writes: [Self.write(
                #"{"set": "notes/a2", "data": {"owner": "alice", "at": {"$serverTimestamp": true}}}"#)]), as: alice)
            #expect(await Self.isDenied {
                _ = try await db.commit(CommitRequest(writes: [Self.write(
                    #"{"set": "notes/a3", "data": {"owner": "alice", "at": {"$timestamp": "2020-01-01T00:00:00Z"}}}"#)]), as: alice)
            })
            // Update: a merge that leaves the owner in place is judged on the merged document.
            _ = try await db.commit(CommitRequest(writes: [Self.write(
                #"{"set": "notes/a1", "data": {"text": "edited"}, "merge": true}"#)]), as: alice)
            // A set without merge drops the owner: the update rule denies it.
            #expect(await Self.isDenied {
                _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "notes/a1", "data": {"text": "x"}}"#)]), as: alice)
            })
            // Someone else's document: denied even though the write would otherwise apply.
            #expect(await Self.isDenied {
                _ = try await db.commit(CommitRequest(writes: [Self.write(
                    #"{"update": "notes/b1", "data": {"text": "mine now"}}"#)]), as: alice)
            })
            // Rules decide before preconditions: a denied create of an existing document says nothing of it.
            #expect(await Self.isDenied {
                _ = try await db.commit(CommitRequest(writes: [Self.write(
                    #"{"create": "notes/b1", "data": {"owner": "bob", "at": 1}}"#)]), as: alice)
            })
            let doc = try await db.get(DocumentPath("notes/a1"), as: .admin)?.decoded()
            #expect(doc?.fields["text"] == .string("edited"))
            #expect(doc?.fields["owner"] == .string("alice"))
        }
    }

    @Test func oneDeniedWriteFailsTheWholeCommit() async throws {
        try await TestDatabase.with(rules: Self.rules, documents: Self.documents) { db in
            let commit = CommitRequest(writes: [
                try Self.write(#"{"set": "notes/a9", "data": {"owner": "alice", "at": {"$serverTimestamp": true}}}"#),
                try Self.write(#"{"delete": "notes/b1"}"#),
            ])
            #expect(await Self.isDenied { _ = try await db.commit(commit, as: alice) })
            #expect(try await db.get(DocumentPath("notes/a9"), as: .admin) == nil)
            #expect(try await db.get(DocumentPath("notes/b1"), as: .admin) != nil)
            // A verify is a get.
            #expect(await Self.isDenied {
                _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"verify": "notes/b1", "precondition": {"exists": true}}"#)]), as: alice)
            })
            _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"verify": "notes/a1", "precondition": {"exists": true}}"#)]), as: alice)
        }
    }

    @Test func getAfterSeesTheWholeBatch() async throws {
        try await TestDatabase.with(rules: Self.rules) { db in
            let room = try Self.write(#"{"set": "rooms/r1", "data": {"owner": "alice"}}"#)
            let member = try Self.write(#"{"set": "rooms/r1/members/alice", "data": {"role": "owner"}}"#)
            // Alone, the member write sees no room.
            #expect(await Self.isDenied { _ = try await db.commit(CommitRequest(writes: [member]), as: alice) })
            // In one batch, getAfter and existsAfter see the room written by the same commit, in either order.
            _ = try await db.commit(CommitRequest(writes: [member, room]), as: alice)
            #expect(try await db.get(DocumentPath("rooms/r1/members/alice"), as: .admin) != nil)
            // Through a transaction too.
            let tx = try await db.beginTransaction(as: bob)
            let room2 = try Self.write(#"{"set": "rooms/r2", "data": {"owner": "bob"}}"#)
            let member2 = try Self.write(#"{"set": "rooms/r2/members/bob", "data": {}}"#)
            _ = try await db.commit(CommitRequest(writes: [room2, member2], transaction: tx), as: bob)
        }
    }

    @Test func recursiveDeleteChecksEveryDocument() async throws {
        var documents = Self.documents
        documents["notes/a1/items/i3"] = #"{"locked": true}"#
        try await TestDatabase.with(rules: Self.rules, documents: documents) { db in
            // `parts/p1` has no delete rule and `i3` is locked: nothing is deleted.
            #expect(await Self.isDenied { _ = try await db.deleteRecursive(DocumentPath("notes/a1"), as: alice) })
            #expect(try await db.get(DocumentPath("notes/a1/items/i1"), as: .admin) != nil)
            // Below items/i1 every document (only itself) is deletable.
            _ = try await db.deleteRecursive(DocumentPath("notes/a1/items/i1"), as: alice)
            #expect(try await db.get(DocumentPath("notes/a1/items/i1"), as: .admin) == nil)
            #expect(await Self.isDenied { _ = try await db.deleteRecursive(DocumentPath("notes/a1/items/i3"), as: alice) })
            _ = try await db.deleteRecursive(DocumentPath("notes/a1"), as: .admin)
            #expect(try await db.get(DocumentPath("notes/a1/items/i2/parts/p1"), as: .admin) == nil)
        }
    }

    /// Listing collection ids is the admin's alone, as in Firestore: alice may list `notes/a1/items`, yet
    /// learns nothing of which collections exist.
    @Test func subcollectionIDsTakeTheAdminKey() async throws {
        try await TestDatabase.with(rules: Self.rules, documents: Self.documents) { db in
            #expect(await Self.isDenied { _ = try await db.collectionIDs(under: DocumentPath("notes/a1"), as: alice) })
            #expect(await Self.isDenied { _ = try await db.collectionIDs(under: DocumentPath("notes/zz"), as: alice) })
            #expect(try await db.collectionIDs(under: DocumentPath("notes/a1"), as: .admin) == ["items"])
            #expect(await Self.isDenied { _ = try await db.collectionIDs(under: nil, as: alice) })
            let roots = try await db.collectionIDs(under: nil, as: .admin)
            #expect(roots == ["notes"])
        }
    }

    @Test func batchesShareTwentyDocumentAccessCalls() async throws {
        // Each write reads its own flag: 21 distinct documents in one batch is over Firestore's limit of 20.
        let rules = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{db}/documents {
                match /w/{id} { allow create: if exists(/databases/$(db)/documents/flags/$(id)); }
              }
            }
            """
        var documents: [String: String] = [:]
        for i in 0..<21 { documents["flags/f\(i)"] = "{}" }
        try await TestDatabase.with(rules: rules, documents: documents) { db in
            func batch(_ n: Int) throws -> CommitRequest {
                CommitRequest(writes: try (0..<n).map { try Self.write(#"{"set": "w/f\#($0)", "data": {}}"#) })
            }
            _ = try await db.commit(try batch(20), as: alice)
            #expect(await Self.isDenied { _ = try await db.commit(try batch(21), as: alice) })
        }
    }

    @Test func reloadingSwapsRulesAndABrokenFileKeepsTheOld() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/app.rules"
        let allowAll = "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /{p=**} { allow read; } } }"
        try allowAll.write(toFile: file, atomically: true, encoding: .utf8)
        try await TestDatabase.with(rules: nil, documents: ["open/x": "{}"]) { db in
            try db.rules.load(file: file)
            #expect(try await db.get(DocumentPath("open/x"), as: .unauthenticated) != nil)
            try "service cloud.firestore { match /x { allow read: if ; } }".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(throws: RulesCompileError.self) { try db.rules.load(file: file) }
            #expect(try await db.get(DocumentPath("open/x"), as: .unauthenticated) != nil)

            // The reloader notices a change on its own and swaps the rules in.
            var configuration = RulesReloader.Configuration()
            configuration.pollInterval = .milliseconds(50)
            let reloader = RulesReloader(path: file, rules: db.rules, configuration: configuration, logger: .init(label: "test"))
            let task = Task { try await reloader.run() }
            defer { task.cancel() }
            try await Task.sleep(for: .milliseconds(200))
            let denyAll = "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /{p=**} { allow read: if false; } } }"
            try denyAll.write(toFile: file, atomically: true, encoding: .utf8)
            var denied = false
            for _ in 0..<100 where !denied {
                try await Task.sleep(for: .milliseconds(50))
                denied = await Self.isDenied { _ = try await db.get(DocumentPath("open/x"), as: .unauthenticated) }
            }
            #expect(denied)
        }
    }
}
