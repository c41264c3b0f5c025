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

        let busy = try registry.begin(.init(alice))
        for _ in 0..<5 {
            clock.now += 50  // used every 50 s: never idle for a minute
            try registry.recordRead(busy, identity: alice, path: path, version: nil)
        }
        clock.now += 19  // 269 s old: still alive
        try registry.touch(busy, identity: alice)
        clock.now += 2   // 271 s old: expired however recently used
        #expect(throws: HearthError.self) { try registry.touch(busy, identity: alice) }

        let idle = try registry.begin(.init(alice))
        clock.now += 59
        try registry.touch(idle, identity: alice)
        clock.now += 61
        #expect(throws: HearthError.self) { _ = try registry.finish(idle, identity: alice) }
    }

    @Test func transactionsBelongToTheirCaller() throws {
        let registry = TransactionRegistry()
        let id = try registry.begin(.init(.user(uid: "alice", token: [:])))
        #expect(throws: HearthError.self) { try registry.touch(id, identity: .user(uid: "bob", token: [:])) }
        #expect(throws: HearthError.self) { try registry.rollback(id, identity: .admin) }
        try registry.rollback(id, identity: .user(uid: "alice", token: [:]))
        #expect(registry.openCount == 0)
    }

    @Test func tooManyOpenTransactionsIsResourceExhausted() throws {
        var configuration = TransactionRegistry.Configuration()
        configuration.maxOpen = 3
        let registry = TransactionRegistry(configuration: configuration)
        for _ in 0..<3 { _ = try registry.begin(.init(.admin)) }
        #expect(throws: HearthError(.resourceExhausted, "too many open transactions (3); commit or roll back some")) {
            _ = try registry.begin(.init(.admin))
        }
    }

    /// Each caller (a user, or the address of callers without a token) and each address has a share of the
    /// table; filling one's share leaves others free to begin, and ending or expiring gives it back.
    @Test func openTransactionsAreBoundedPerCallerAndPerAddress() throws {
        let clock = Clock()
        var configuration = TransactionRegistry.Configuration()
        configuration.maxOpenPerCaller = 3
        configuration.maxOpenPerAddress = 5
        let registry = TransactionRegistry(configuration: configuration, now: { clock.now })
        func user(_ uid: String, _ address: String) -> TransactionRegistry.Caller {
            .init(.user(uid: uid, token: [:]), address: address)
        }
        let nobody = TransactionRegistry.Caller(.unauthenticated, address: "10.0.0.1")
        let rows: [(TransactionRegistry.Caller, opened: Int)] = [
            (nobody, 3),                                            // callers without a token share their address's slots
            (.init(.unauthenticated, address: "10.0.0.2"), 3),      // another address has its own
            (user("alice", "10.0.0.1"), 2),                         // the address's share (5) runs out before alice's (3)
            (user("bob", "10.0.0.3"), 3),
            (.init(.admin, address: "10.0.0.1"), 10),               // the admin counts against the table only
        ]
        var alices: [String] = []
        for (caller, opened) in rows {
            for _ in 0..<opened {
                let id = try registry.begin(caller)
                if caller.identity.uid == "alice" { alices.append(id) }
            }
            if caller.identity.isAdmin { continue }
            #expect(throws: HearthError.self, "\(caller)") { _ = try registry.begin(caller) }
        }
        // Ending one gives its slot back; so does expiring.
        try registry.rollback(alices[0], identity: .user(uid: "alice", token: [:]))
        _ = try registry.begin(user("alice", "10.0.0.1"))
        #expect(throws: HearthError.self) { _ = try registry.begin(nobody) }
        clock.now += 61
        _ = try registry.begin(nobody)
        _ = try registry.begin(user("alice", "10.0.0.1"))
    }

    @Test func aTransactionReadsAtMostItsBound() throws {
        var configuration = TransactionRegistry.Configuration()
        configuration.maxReads = 2
        let registry = TransactionRegistry(configuration: configuration)
        let id = try registry.begin(.init(.admin))
        try registry.recordRead(id, identity: .admin, path: try DocumentPath("a/1"), version: nil)
        try registry.recordRead(id, identity: .admin, path: try DocumentPath("a/2"), version: nil)
        try registry.recordRead(id, identity: .admin, path: try DocumentPath("a/1"), version: nil)
        #expect(throws: HearthError(.resourceExhausted, "a transaction may read at most 2 documents")) {
            try registry.recordRead(id, identity: .admin, path: try DocumentPath("a/3"), version: nil)
        }
    }

    @Test func firstReadOfAPathIsTheOneChecked() throws {
        let registry = TransactionRegistry()
        let path = try DocumentPath("a/b")
        let id = try registry.begin(.init(.admin))
        try registry.recordRead(id, identity: .admin, path: path, version: Timestamp(microseconds: 1))
        try registry.recordRead(id, identity: .admin, path: path, version: Timestamp(microseconds: 2))
        let reads = try registry.finish(id, identity: .admin)
        #expect(reads[path] == .some(Timestamp(microseconds: 1)))
    }

    @Test func closedStoreAnswersUnavailable() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(configuration: .init(dataDirectory: dir))
        let database = Database(storage: SQLiteDocumentStorage(store))
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
