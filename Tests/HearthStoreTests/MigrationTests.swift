import Foundation
import HearthCore
import HearthSQLite
@testable import HearthStore
import HearthTesting
import Testing

/// Upgrading a database made before the field index existed indexes the documents it already holds, so
/// queries find them.
@Suite struct MigrationTests {
    @Test func fieldIndexMigrationIndexesStoredDocuments() async throws {
        let documents: [(path: String, json: String)] = [
            ("things/t0", #"{"a": 1, "tags": ["x", "y"]}"#), ("things/t1", #"{"m": {"n": true}}"#), ("things/t2", "{}"),
        ]
        // The field index that writes of the same documents make on a new store.
        let written = TestFolders.path("hearth-migrate-written")
        defer { try? FileManager.default.removeItem(atPath: written) }
        let fresh = try Store(configuration: Store.Configuration(dataDirectory: written))
        for (path, json) in documents { try await put(path, json, in: fresh) }
        fresh.close()
        let indexed = try Self.fieldIndex(Store.Configuration(dataDirectory: written).databasePath)
        #expect(!indexed.isEmpty)

        let dir = TestFolders.path("hearth-migrate")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Store.Configuration(dataDirectory: dir)
        try makeDatabaseBeforeTheFieldIndex(at: configuration.databasePath, documents: documents)
        let raw = try SQLiteConnection(path: configuration.databasePath)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        #expect(try raw.scalarInt("PRAGMA user_version") == Int64(Schema.migrations.count))
        // The revocation log and its triggers were made and dropped again on the way.
        #expect(try raw.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE 'auth_revocations%' OR name IN ('auth_sessions_revoked', 'auth_users_disabled', 'auth_sessions_deleted')") == 0)
        #expect(try Self.fieldIndex(configuration.databasePath) == indexed)
        // Listing, now served by the field index, finds every document, the empty one too; the old
        // document indexes are gone.
        let things = try CollectionPath("things")
        #expect(try await store.read { try $0.documents(in: things, after: nil, limit: 10).map(\.path.id) } == ["t0", "t1", "t2"])
        #expect(try await store.read { try $0.documents(in: things, after: "t0", limit: 1).map(\.path.id) } == ["t1"])
        #expect(try raw.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE 'documents_by_%'") == 0)
    }

    /// Every row of the field index of the database at `path`, in order.
    static func fieldIndex(_ path: String) throws -> [String] {
        let rows = try SQLiteConnection(path: path).prepare("SELECT scope, field, hex(key), hex(doc) FROM field_index ORDER BY 1, 2, 3, 4")
        defer { rows.reset() }
        var all: [String] = []
        while try rows.step() { all.append("\(rows.text(0)) \(rows.text(1)) \(rows.text(2)) \(rows.text(3))") }
        return all
    }
}
