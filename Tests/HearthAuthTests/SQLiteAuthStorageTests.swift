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
        TestFolders.path("hearth-auth-store")
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
        try await storage.enqueueOutbox([OutboxMessage(id: "m1", purpose: .passwordReset, to: "u@example.com", uid: "u",
                                                       token: token, expiresAt: t0, createdAt: t0)])
        #expect(try await storage.pendingOutbox(dueBy: t0, limit: 10).map(\.token) == [token])
        var bytes = Data()
        for suffix in ["", "-wal"] {
            if let data = FileManager.default.contents(atPath: folder + "/hearth.sqlite" + suffix) { bytes += data }
        }
        #expect(bytes.count > 4_096)
        #expect(bytes.range(of: Data(token.utf8)) == nil, "the outbox token is in the database file in clear")
        store.close()

        // Under another key the old message cannot be opened, so it is dropped, never sent garbled.
        let reopened = try Self.openStore(folder)
        defer { reopened.close() }
        let again = SQLiteAuthStorage(file: reopened)
        #expect(try await again.pendingOutbox(dueBy: t0, limit: 10).isEmpty)
        #expect(try await SQLiteAuthStorage(file: reopened).pendingOutbox(dueBy: t0, limit: 10).isEmpty)
    }

    @Test func outboxKeyInTheDataFolderOutlivesARestart() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let token = Tokens.generate(.passwordReset)
        let t0 = Timestamp(microseconds: 1_800_000_000_000_000)
        let store = try Self.openStore(folder)
        let storage = SQLiteAuthStorage(file: store, seal: try OutboxSeal.loadOrCreate(dataDirectory: folder))
        try await storage.enqueueOutbox([OutboxMessage(id: "m1", purpose: .passwordReset, to: "u@example.com", uid: "u",
                                                       token: token, expiresAt: t0, createdAt: t0)])
        store.close()
        let reopened = try Self.openStore(folder)
        defer { reopened.close() }
        let again = SQLiteAuthStorage(file: reopened, seal: try OutboxSeal.loadOrCreate(dataDirectory: folder))
        #expect(try await again.pendingOutbox(dueBy: t0, limit: 10).map(\.token) == [token])
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/" + OutboxSeal.fileName)[.posixPermissions] as? Int
        #expect(mode == 0o600)
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
