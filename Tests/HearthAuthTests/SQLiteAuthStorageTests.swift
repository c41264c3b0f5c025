import Foundation
import HearthAuth
import HearthCore
import HearthStore
import HearthTesting
import Testing

/// The SQLite account storage keeps every promise of `AuthStorage` (the shared conformance suite), and
/// keeps them across a reopen of the file.
@Suite struct SQLiteAuthStorageTests {
    /// A store over a folder.
    static func openStore(_ folder: String) throws -> Store {
        var configuration = Store.Configuration(dataDirectory: folder)
        configuration.synchronous = .normal
        configuration.readers = 1
        return try Store(configuration: configuration)
    }

    static func temporaryFolder() -> String {
        NSTemporaryDirectory() + "hearth-auth-store-" + makeAutoID()
    }

    @Test func conformsToTheStorageContract() async throws {
        let folders = OpenStores()
        defer { folders.closeAll() }
        let failures = try await AuthStorageConformance.run { () throws(HearthError) -> any AuthStorage in
            let folder = Self.temporaryFolder()
            do {
                let store = try Self.openStore(folder)
                folders.add(folder, store)
                return SQLiteAuthStorage(file: store)
            } catch {
                throw .internal("cannot open a store: \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func accountsAndSessionsSurviveAReopen() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let t0 = Timestamp(microseconds: 1_800_000_000_000_000)
        let user = UserRecord(uid: "ann", email: "Ann@Example.com", emailNormalized: "ann@example.com",
                              passwordHash: "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
                              displayName: "Ann", emailVerified: true,
                              claims: ["role": .string("editor"), "level": .int(3)], createdAt: t0)
        let session = SessionRecord(id: "s1", uid: "ann", accessTokenHash: Tokens.hash("a"), accessIssuedAt: t0,
                                    accessExpires: t0, refreshTokenHash: Tokens.hash("r"), refreshExpires: t0,
                                    createdAt: t0, provider: .password)
        do {
            let store = try Self.openStore(folder)
            let storage = SQLiteAuthStorage(file: store)
            try await storage.insertUser(user)
            try await storage.insertSession(session)
            store.close()
        }
        let store = try Self.openStore(folder)
        defer { store.close() }
        let storage = SQLiteAuthStorage(file: store)
        #expect(try await storage.user(uid: "ann") == user)
        #expect(try await storage.user(emailNormalized: "ann@example.com")?.uid == "ann")
        #expect(try await storage.session(accessTokenHash: Tokens.hash("a")) == session)
    }

    @Test func outboxTokensAreSealedAtRest() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.openStore(folder)
        let storage = SQLiteAuthStorage(file: store)
        let token = Tokens.generate(.passwordReset)
        let t0 = Timestamp(microseconds: 1_800_000_000_000_000)
        try await storage.insertUser(UserRecord(uid: "u", email: "u@example.com", emailNormalized: "u@example.com",
                                                createdAt: t0))
        try await storage.enqueueOutbox(OutboxMessage(id: "m1", purpose: .passwordReset, to: "u@example.com", uid: "u",
                                                      token: token, expiresAt: t0, createdAt: t0))
        #expect(try await storage.pendingOutbox(limit: 10).map(\.token) == [token])
        var bytes = Data()
        for suffix in ["", "-wal"] {
            if let data = FileManager.default.contents(atPath: folder + "/hearth.sqlite" + suffix) { bytes += data }
        }
        #expect(bytes.count > 4_096)
        #expect(bytes.range(of: Data(token.utf8)) == nil, "the outbox token is in the database file in clear")
        store.close()

        // A new process has a new seal: the old message cannot be opened, so it is dropped, never sent garbled.
        let reopened = try Self.openStore(folder)
        defer { reopened.close() }
        let again = SQLiteAuthStorage(file: reopened)
        #expect(try await again.pendingOutbox(limit: 10).isEmpty)
        #expect(try await SQLiteAuthStorage(file: reopened).pendingOutbox(limit: 10).isEmpty)
    }
}

extension SQLiteAuthStorageTests {
    /// Every way a session stops working leaves a row in the revocation log, which another store on the same
    /// file (another process) reads past the last row it saw; sessions that were not live leave none.
    @Test func revocationsAreLoggedForOtherProcesses() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.openStore(folder)
        defer { store.close() }
        let other = try Self.openStore(folder)
        defer { other.close() }
        let writer = SQLiteAuthStorage(file: store)
        let reader = SQLiteAuthStorage(file: other)
        let t0 = Timestamp(microseconds: 1_800_000_000_000_000)
        let far = Timestamp(microseconds: 1_900_000_000_000_000)
        func session(_ id: String, _ uid: String, refreshExpires: Timestamp = far) -> SessionRecord {
            SessionRecord(id: id, uid: uid, accessTokenHash: Tokens.hash("a" + id), accessIssuedAt: t0, accessExpires: far,
                          refreshTokenHash: Tokens.hash("r" + id), refreshExpires: refreshExpires, createdAt: t0,
                          provider: .password)
        }
        for uid in ["ann", "bob", "cy", "dee"] { try await writer.insertUser(UserRecord(uid: uid, createdAt: t0)) }
        for (id, uid) in [("a1", "ann"), ("a2", "ann"), ("b1", "bob"), ("c1", "cy"), ("c2", "cy"), ("d1", "dee")] {
            try await writer.insertSession(session(id, uid))
        }
        try await writer.insertSession(session("old", "dee", refreshExpires: t0))
        var last = try reader.latestRevocationSequence()
        #expect(try reader.revocations(after: last, limit: 10).isEmpty)

        func next() throws -> [RevocationEvent] {
            let rows = try reader.revocations(after: last, limit: 10)
            last = rows.last?.sequence ?? last
            return rows.map(\.event)
        }
        #expect(try await writer.revokeSession(id: "a1", at: t0))
        #expect(try next() == [RevocationEvent(uid: "ann", sessionIDs: ["a1"], reason: .revokedByAdmin)])
        #expect(try await !writer.revokeSession(id: "a1", at: t0))
        _ = try await writer.revokeSessions(uid: "ann", except: nil, at: t0)
        #expect(try next() == [RevocationEvent(uid: "ann", sessionIDs: ["a2"], reason: .revokedByAdmin)])

        var bob = try #require(try await writer.user(uid: "bob"))
        bob.disabled = true
        try await writer.updateUser(bob)
        #expect(try next() == [RevocationEvent(uid: "bob", sessionIDs: ["b1"], reason: .accountDisabled)])

        #expect(try await writer.deleteUser(uid: "cy") == ["c1", "c2"])
        #expect(try next() == [RevocationEvent(uid: "cy", sessionIDs: ["c1", "c2"], reason: .accountDeleted)])

        // Sweeping sessions that had ended (expired, or revoked earlier) revokes nothing new.
        #expect(try await writer.deleteSessions(endedBefore: Timestamp(microseconds: t0.microseconds + 1_000_000)) == 3)
        #expect(try next().isEmpty)
        #expect(try await writer.session(id: "d1") != nil)
    }
}

/// Stores opened by a test, closed and removed at its end.
final class OpenStores: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(String, Store)] = []

    func add(_ folder: String, _ store: Store) {
        lock.lock()
        entries.append((folder, store))
        lock.unlock()
    }

    func closeAll() {
        lock.lock()
        let all = entries
        entries = []
        lock.unlock()
        for (folder, store) in all {
            store.close()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }
}
