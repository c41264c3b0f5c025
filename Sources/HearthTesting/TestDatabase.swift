import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HearthRules
import Logging

/// An engine over a fresh temporary store, for tests that call `Database` directly (no HTTP), with rules
/// compiled from source and documents loaded as the admin.
public final class TestDatabase: Sendable {
    /// The engine.
    public let database: Database
    /// The accounts, in the same file (their changes queue the events of `database.functions`).
    public let accounts: any AuthStorage
    /// The data folder, removed by `close()`.
    public let dataDirectory: String

    /// Opens an engine; `rules` is rules source (nil: no rules, so only the admin passes), `documents` maps
    /// document paths to wire JSON data, `dev` makes denials name the deciding rule.
    public static func open(rules: String? = nil, fileName: String = "test.rules", dev: Bool = true,
                            documents: [String: String] = [:], dataDirectory: String? = nil) async throws -> TestDatabase {
        let folder = dataDirectory ?? TestFolders.make()
        var configuration = StorageConfiguration(dataDirectory: folder)
        configuration.synchronous = .normal
        configuration.readers = 1
        let functions = FunctionsInForce()
        let storage = try StorageBackend.open(configuration, functions: functions,
                                              logger: Logger(label: "hearth.test") { _ in SwiftLogNoOpLogHandler() })
        let database = Database(storage: storage.documents, functions: functions)
        database.rules.dev = dev
        let test = TestDatabase(database: database, accounts: storage.accounts, dataDirectory: folder)
        if !documents.isEmpty {
            var writes: [Write] = []
            for (path, data) in documents.sorted(by: { $0.key < $1.key }) {
                writes.append(try Write(kind: "set", path: DocumentPath(path), data: JSON.parse(data)))
            }
            _ = try await database.commit(CommitRequest(writes: writes), as: .admin)
        }
        if let rules { database.rules.install(try RulesProgram.compile(source: rules, fileName: fileName)) }
        return test
    }

    init(database: Database, accounts: any AuthStorage, dataDirectory: String) {
        self.database = database
        self.accounts = accounts
        self.dataDirectory = dataDirectory
    }

    /// Closes the store and keeps its folder, for a test that opens it again (`open(dataDirectory:)`).
    public func closeKeepingData() {
        database.storage.close()
    }

    /// Closes the store and removes its folder.
    public func close() {
        database.storage.close()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    /// Runs a body against a fresh engine, then closes it.
    public static func with<T>(rules: String? = nil, dev: Bool = true, documents: [String: String] = [:],
                               _ body: (Database) async throws -> T) async throws -> T {
        let test = try await open(rules: rules, dev: dev, documents: documents)
        defer { test.close() }
        return try await body(test.database)
    }
}

extension Identity {
    /// A signed-in user as rules tests see one: Firestore's default claims (`sub`, `user_id`,
    /// `firebase.sign_in_provider`) under the given ones.
    public static func testUser(_ uid: String, claims: [String: Value] = [:]) -> Identity {
        .user(uid: uid, token: RulesAuth.defaultClaims(uid: uid, claims: claims))
    }
}
