import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HearthStore
import HearthTesting
import ServiceLifecycle
import Testing

/// The change feed without sockets: rules at add time and on each change, revocation, and the bounded queue
/// of a client that does not read.
@Suite struct ListenFeedTests {
    /// A store, an engine and a running feed over a fresh folder.
    final class Harness: Sendable {
        let store: Store
        let database: Database
        let feed: ChangeFeed
        let task: Task<Void, any Error>
        let directory: String

        init(configuration: ListenConfiguration = .init(), authorizer: ListenAuthorizer? = nil, revocations: RevocationHub? = nil) throws {
            directory = TestServer.temporaryDirectory()
            var storeConfiguration = Store.Configuration(dataDirectory: directory)
            storeConfiguration.synchronous = .normal
            store = try Store(configuration: storeConfiguration)
            database = Database(store: store)
            feed = ChangeFeed(database: database, configuration: configuration, authorizer: authorizer, revocations: revocations)
            let feed = self.feed
            task = Task { try await feed.run() }
        }

        func set(_ path: String, _ json: String) async throws {
            let fields = try Value.decodeFields(JSON.parse(json))
            _ = try await database.commit(CommitRequest(writes: [Write(kind: .set(merge: nil), path: try DocumentPath(path), fields: fields)]), as: .admin)
        }

        func stop() async {
            task.cancel()
            _ = try? await task.value
            store.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func next(_ connection: ListenConnection) async throws -> ListenEvent {
        try await withThrowingTaskGroup(of: ListenEvent?.self) { group in
            group.addTask { await connection.next() }
            group.addTask {
                try await Task.sleep(for: .seconds(5))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let event = first else { throw ListenClient.Failure(description: "no event within 5 s") }
            return event
        }
    }

    static func isEnd(_ event: ListenEvent?) -> Bool {
        if case .none = event { return true }
        return false
    }

    @Test func rulesAtAddTimeAndOnEveryChange() async throws {
        let authorizer = ListenAuthorizer(
            authorizeTarget: { _, target in
                if case .document(let path) = target, path.segments[0] == "secret" { throw HearthError.permissionDenied() }
            },
            authorizeRead: { _, _, doc in
                if doc?.fields["private"] == .bool(true) { throw HearthError.permissionDenied("the document is private now") }
            })
        let h = try Harness(authorizer: authorizer)
        let alice = Identity.user(uid: "alice", token: [:])
        let connection = h.feed.connect(identity: alice)
        #expect(throws: HearthError.permissionDenied()) {
            try connection.listen(id: "s", target: .document(try DocumentPath("secret/x")), resumeToken: nil)
        }
        try await h.set("notes/n1", #"{"text": "hi"}"#)
        try connection.listen(id: "n", target: .document(try DocumentPath("notes/n1")), resumeToken: nil)
        guard case .snapshot(let first) = try await Self.next(connection) else { Issue.record("expected a snapshot"); return }
        #expect(first.initial && first.changes.count == 1)
        try await h.set("notes/n1", #"{"text": "secret", "private": true}"#)
        guard case .targetError(let id, let error) = try await Self.next(connection) else { Issue.record("expected an error"); return }
        #expect(id == "n" && error.code == .permissionDenied)
        #expect(connection.targetCount == 0)
        await h.stop()
    }

    @Test func revokingTheSessionEndsItsConnectionsOnly() async throws {
        let hub = RevocationHub()
        let h = try Harness(revocations: hub)
        let revoked = h.feed.connect(identity: .admin, session: ListenSession(uid: "u1", sessionID: "s1"))
        let other = h.feed.connect(identity: .admin, session: ListenSession(uid: "u1", sessionID: "s2"))
        try revoked.listen(id: "a", target: .document(try DocumentPath("a/b")), resumeToken: nil)
        try other.listen(id: "a", target: .document(try DocumentPath("a/b")), resumeToken: nil)
        _ = try await Self.next(revoked)
        _ = try await Self.next(other)
        // The feed subscribes to the hub when it starts; wait for that before publishing.
        while hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        hub.publish(RevocationEvent(uid: "u1", sessionIDs: ["s1"], reason: .loggedOut))
        guard case .closed(let error, let code) = try await Self.next(revoked) else { Issue.record("expected a close"); return }
        #expect(error.code == .unauthenticated && code == 1008)
        #expect(Self.isEnd(await revoked.next()))
        try await h.set("a/b", #"{"x": 1}"#)
        guard case .snapshot(let s) = try await Self.next(other) else { Issue.record("expected a snapshot"); return }
        #expect(s.changes.count == 1 && !s.initial)
        await h.stop()
    }

    /// A connection is ended by the revocation of its session even before it adds a target, so that it
    /// cannot add one afterwards.
    @Test func revokingTheSessionEndsAConnectionWithoutTargets() async throws {
        let hub = RevocationHub()
        let h = try Harness(revocations: hub)
        let idle = h.feed.connect(identity: .admin, session: ListenSession(uid: "u1", sessionID: "s1"))
        while hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        hub.publish(RevocationEvent(uid: "u1", sessionIDs: ["s1"], reason: .revokedByAdmin))
        guard case .closed(let error, let code) = try await Self.next(idle) else { Issue.record("expected a close"); return }
        #expect(error.code == .unauthenticated && code == 1008)
        #expect(throws: HearthError.self) { try idle.listen(id: "a", target: .document(try DocumentPath("a/b")), resumeToken: nil) }
        await h.stop()
    }

    @Test func aClientThatDoesNotReadIsToldToResume() async throws {
        var configuration = ListenConfiguration()
        configuration.maxQueuedEvents = 3
        let h = try Harness(configuration: configuration)
        let connection = h.feed.connect(identity: .admin)
        try connection.listen(id: "d", target: .document(try DocumentPath("a/b")), resumeToken: nil)
        // The first snapshot is queued (and never read) before the writes, so each write adds an event.
        while connection.queuedEvents < 1 { try await Task.sleep(for: .milliseconds(5)) }
        for k in 0..<10 { try await h.set("a/b", #"{"n": \#(k)}"#) }
        try await Task.sleep(for: .milliseconds(100))
        // Whatever was queued is dropped: the client learns it must resume, and nothing more is buffered.
        guard case .closed(let error, let code) = try await Self.next(connection) else { Issue.record("expected a close"); return }
        #expect(error.code == .resourceExhausted && code == 1013)
        #expect(Self.isEnd(await connection.next()))
        await h.stop()
    }
}

