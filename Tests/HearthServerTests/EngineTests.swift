import Foundation
import HearthCore
import HearthEngine
import HearthStore
import HearthTesting
import Testing

/// Engine pieces tested without HTTP: transaction lifetimes with an injected clock, and the store refusing
/// work once closed.
@Suite struct EngineTests {
    final class Clock: @unchecked Sendable {
        var now: Double = 1_000
    }

    @Test func transactionsExpireAfter270SecondsOrAMinuteIdle() throws {
        let clock = Clock()
        let registry = TransactionRegistry(now: { clock.now })
        let alice = Identity.user(uid: "alice", token: [:])
        let path = try DocumentPath("a/b")

        let busy = try registry.begin(identity: alice)
        for _ in 0..<5 {
            clock.now += 50  // used every 50 s: never idle for a minute
            try registry.recordRead(busy, identity: alice, path: path, version: nil)
        }
        clock.now += 19  // 269 s old: still alive
        try registry.touch(busy, identity: alice)
        clock.now += 2   // 271 s old: expired however recently used
        #expect(throws: HearthError.self) { try registry.touch(busy, identity: alice) }

        let idle = try registry.begin(identity: alice)
        clock.now += 59
        try registry.touch(idle, identity: alice)
        clock.now += 61
        #expect(throws: HearthError.self) { _ = try registry.finish(idle, identity: alice) }
    }

    @Test func transactionsBelongToTheirCaller() throws {
        let registry = TransactionRegistry()
        let id = try registry.begin(identity: .user(uid: "alice", token: [:]))
        #expect(throws: HearthError.self) { try registry.touch(id, identity: .user(uid: "bob", token: [:])) }
        #expect(throws: HearthError.self) { try registry.rollback(id, identity: .admin) }
        try registry.rollback(id, identity: .user(uid: "alice", token: [:]))
        #expect(registry.openCount == 0)
    }

    @Test func tooManyOpenTransactionsIsResourceExhausted() throws {
        var configuration = TransactionRegistry.Configuration()
        configuration.maxOpen = 3
        let registry = TransactionRegistry(configuration: configuration)
        for _ in 0..<3 { _ = try registry.begin(identity: .admin) }
        #expect(throws: HearthError(.resourceExhausted, "too many open transactions (3); commit or roll back some")) {
            _ = try registry.begin(identity: .admin)
        }
    }

    @Test func firstReadOfAPathIsTheOneChecked() throws {
        let registry = TransactionRegistry()
        let path = try DocumentPath("a/b")
        let id = try registry.begin(identity: .admin)
        try registry.recordRead(id, identity: .admin, path: path, version: Timestamp(microseconds: 1))
        try registry.recordRead(id, identity: .admin, path: path, version: Timestamp(microseconds: 2))
        let reads = try registry.finish(id, identity: .admin)
        #expect(reads[path] == .some(Timestamp(microseconds: 1)))
    }

    @Test func closedStoreAnswersUnavailable() async throws {
        let dir = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(configuration: .init(dataDirectory: dir))
        let database = Database(store: store)
        let path = try DocumentPath("a/b")
        _ = try await database.commit(CommitRequest(writes: [Write(kind: .set(merge: nil), path: path, fields: ["v": .int(1)])]), as: .admin)
        store.close()
        await #expect(throws: HearthError.unavailable("the server is shutting down")) {
            _ = try await database.commit(CommitRequest(writes: [Write(kind: .delete, path: path)]), as: .admin)
        }
        // The committed write is in the file after the close.
        let reopened = try Store(configuration: .init(dataDirectory: dir))
        let doc = try reopened.pointRead { try $0.document(at: path) }
        #expect(try doc?.decoded().fields == ["v": .int(1)])
        reopened.close()
    }
}
