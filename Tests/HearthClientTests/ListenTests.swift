import Foundation
import HearthAuth
@testable import HearthClient
import HearthCore
import HearthServer
import HearthTesting
import Testing

/// Live updates through `snapshots()`: the view the snapshots describe, and reconnecting with the last resume
/// token when the connection is lost, so that no change is lost and none is delivered twice.
@Suite struct ListenTests {
    static func url(_ server: TestServer) -> URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// Each change of a listener, as `type:id`, in order.
    static func changes(_ snapshots: [QuerySnapshot]) -> [String] {
        snapshots.flatMap { $0.documentChanges.map { "\($0.type.rawValue):\($0.document.documentID)" } }
    }

    @Test func aQueryListenerDescribesItsResult() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: Self.url(server), adminKey: server.adminKey)
            try await db.document("tasks/a").setData(["done": false, "rank": 1])
            try await db.document("tasks/b").setData(["done": true, "rank": 2])
            let open = AsyncCollector(db.collection("tasks").whereField("done", isEqualTo: false).order(by: "rank").snapshots())
            defer { open.cancel() }
            let first = try await open.wait("the first snapshot") { !$0.isEmpty }
            #expect(first[0].documents.map(\.documentID) == ["a"])
            #expect(Self.changes(first) == ["added:a"])

            try await db.document("tasks/c").setData(["done": false, "rank": 0])
            try await db.document("tasks/a").updateData(["rank": 5])
            try await db.document("tasks/c").updateData(["done": true])
            let all = try await open.wait("three changes") { Self.changes($0).count == 4 }
            #expect(Self.changes(all) == ["added:a", "added:c", "modified:a", "removed:c"])
            #expect(all.last?.documents.map(\.documentID) == ["a"])
            let added = try #require(all.dropFirst().first?.documentChanges.first)
            #expect(added.oldIndex == -1 && added.newIndex == 0, "c sorts before a")
        }
    }

    @Test func aDocumentListenerSeesItAppearChangeAndGo() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: Self.url(server), adminKey: server.adminKey)
            struct Note: Codable { var text: String }
            let ref = db.document("notes/n1")
            let notes = AsyncCollector(ref.snapshots())
            defer { notes.cancel() }
            try await notes.wait("the first snapshot") { !$0.isEmpty }
            #expect(notes.collected[0].exists == false)
            try await ref.setData(from: Note(text: "one"))
            try await ref.setData(from: Note(text: "two"))
            try await ref.delete()
            let seen = try await notes.wait("the deletion") { $0.count == 4 }
            #expect(seen[1].exists)
            #expect(try seen[1].data(as: Note.self).text == "one")
            #expect(try seen[2].data(as: Note.self).text == "two")
            #expect(!seen[3].exists)
        }
    }

    /// The server stops (its listeners are told `unavailable` and closed) and starts again on the same data
    /// folder and port, with writes before, during the client's reconnect and after: the listener resumes from
    /// its last resume token and sees each change exactly once.
    @Test func aListenerResumesAcrossAServerRestartWithoutLosingOrRepeatingChanges() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try await TestServer.start(dataDirectory: folder)
        let (port, key) = (first.port, first.adminKey)
        let url = Self.url(first)
        let db = Hearth(url: url, adminKey: key)
        for id in ["n0", "n1", "n2"] { try await db.document("feed/\(id)").setData(["v": 0]) }
        let feed = AsyncCollector(Hearth(url: url, adminKey: key).collection("feed").snapshots())
        defer { feed.cancel() }
        try await feed.wait("the first snapshot") { !$0.isEmpty }
        try await db.document("feed/n3").setData(["v": 0])
        try await feed.wait("n3") { Self.changes($0).contains("added:n3") }

        await first.stop()
        let second = try await TestServer.start(dataDirectory: folder) { $0.port = port; $0.adminKey = key }
        defer { Task { await second.stop() } }
        try await db.document("feed/n4").setData(["v": 0])
        try await db.document("feed/n0").updateData(["v": 1])
        try await db.document("feed/n1").delete()
        try await feed.wait("the changes made after the restart") { Self.changes($0).contains("removed:n1") }
        try await db.document("feed/n5").setData(["v": 0])
        let all = try await feed.wait("n5") { Self.changes($0).contains("added:n5") }

        // The writes made across the restart may come as one snapshot (removals first) or several.
        let changes = Self.changes(all)
        #expect(changes.count == 8, "\(changes)")
        #expect(Array(changes.prefix(4)) == ["added:n0", "added:n1", "added:n2", "added:n3"])
        #expect(Set(changes.dropFirst(4).prefix(3)) == ["added:n4", "modified:n0", "removed:n1"])
        #expect(changes.last == "added:n5")
        #expect(all.last?.documents.map { $0.documentID } == ["n0", "n2", "n3", "n4", "n5"])
        #expect(!all.contains { $0.isReset })
        #expect(feed.ended == nil, "the stream is still open")
    }

    /// A listener of a signed-in user outlives its access token: the client refreshes the session and sends the
    /// new token on the open socket (`auth`) before the old one expires, so changes keep arriving on the one
    /// connection.
    @Test func aSignedInListenerOutlivesItsAccessToken() async throws {
        let file = try AccountTests.rulesFile()
        let lifetime: Int64 = 9
        try await TestServer.with(configure: { $0.rulesFile = file; $0.useTestAccounts(); $0.auth.accessTokenLifetime = .seconds(lifetime) }) { server, _ in
            let db = Hearth(url: Self.url(server))
            try await db.auth.createUser(withEmail: "cy@example.com", password: "a long password")
            let first = try #require(try await db.auth.idToken())
            let notes = AsyncCollector(db.collection("notes").snapshots())
            defer { notes.cancel() }
            try await notes.wait("the first snapshot") { !$0.isEmpty }
            var expected: [String] = []
            // Writes across two lifetimes of a token.
            for k in 0..<6 {
                try await db.document("notes/k\(k)").setData(["k": k])
                expected.append("added:k\(k)")
                try await notes.wait("k\(k)") { Self.changes($0).contains("added:k\(k)") }
                try await Task.sleep(for: .seconds(Double(lifetime) / 3))
            }
            #expect(try await db.auth.idToken() != first)
            #expect(db.openedListenConnections == 1, "each refreshed token went over the open socket")
            #expect(Self.changes(notes.collected) == expected)
            #expect(notes.ended == nil)
        }
    }

    /// A listener whose token the server refuses at the upgrade ends with `unauthenticated` rather than trying
    /// for ever.
    @Test func aTokenThatDoesNotWorkEndsTheStream() async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { server, _ in
            let forged = AsyncCollector(Hearth(url: Self.url(server), token: "hat_not_a_token").collection("notes").snapshots())
            defer { forged.cancel() }
            await #expect(throws: ExpectationFailure.self) { try await forged.wait("a snapshot") { !$0.isEmpty } }
            let error = try #require(forged.ended ?? nil) as? HearthClientError
            #expect(error?.code == .unauthenticated && error?.status == 401)
        }
    }

    /// A target the server ends (here: the rules deny it) ends the stream with the typed error.
    @Test func aDeniedTargetEndsTheStreamWithTheError() async throws {
        try await TestServer.with { server, _ in
            let anonymous = Hearth(url: Self.url(server))
            let denied = AsyncCollector(anonymous.collection("secrets").snapshots())
            defer { denied.cancel() }
            await #expect(throws: ExpectationFailure.self) { try await denied.wait("a snapshot") { !$0.isEmpty } }
            let error = try #require(denied.ended ?? nil) as? HearthClientError
            #expect(error?.code == .permissionDenied)
        }
    }
}
