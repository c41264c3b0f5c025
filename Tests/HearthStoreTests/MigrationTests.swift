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
        let dir = TestFolders.path("hearth-migrate")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Store.Configuration(dataDirectory: dir)
        var store = try Store(configuration: configuration)
        for (i, body) in [#"{"a": 1, "tags": ["x", "y"]}"#, #"{"m": {"n": true}}"#, #"{}"#].enumerated() {
            try await store.write { context in
                let time = context.nextCommitTime()
                let doc = StoredDocument(path: try DocumentPath("things/t\(i)"), data: Array(body.utf8),
                                         createTime: time, updateTime: time)
                try context.put(doc, commitTime: time)
            }
        }
        store.close()
        let raw = try SQLiteConnection(path: configuration.databasePath)
        let indexed = try raw.scalarInt("SELECT count(*) FROM field_index")
        #expect((indexed ?? 0) > 0)
        // Back to the schema before the field index (and the composite indexes, import records, stored objects, outbox delivery columns, function events, push tables, session claims, function timers and send keys after it; the revocation
        // log that came between is dropped again by a later migration).
        try raw.execute("""
            DROP INDEX auth_outbox_due; ALTER TABLE auth_outbox DROP COLUMN content; ALTER TABLE auth_outbox DROP COLUMN attempts; ALTER TABLE auth_outbox DROP COLUMN next_attempt_at; ALTER TABLE auth_outbox DROP COLUMN last_error; ALTER TABLE auth_outbox DROP COLUMN dead_at;
            DROP TABLE push_devices; DROP TABLE push_topics; DROP TABLE push_queue; ALTER TABLE auth_sessions DROP COLUMN claims; DROP TABLE function_timers; DROP TABLE function_schedules; DROP TABLE send_keys;
            DROP TABLE function_events; DROP TABLE composite_indexes; DROP TABLE nested_groups; DROP TABLE field_overrides; DROP TABLE index_state; DROP TABLE imports; DROP TABLE files; DROP TABLE field_index;
            CREATE INDEX documents_by_parent ON documents(parent, path); CREATE INDEX documents_by_group ON documents(collection_id, path);
            PRAGMA user_version = \(Schema.fieldIndexVersion - 1)
            """)

        store = try Store(configuration: configuration)
        defer { store.close() }
        #expect(try raw.scalarInt("PRAGMA user_version") == Int64(Schema.migrations.count))
        // The revocation log and its triggers were made and dropped again on the way.
        #expect(try raw.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE 'auth_revocations%' OR name IN ('auth_sessions_revoked', 'auth_users_disabled', 'auth_sessions_deleted')") == 0)
        #expect(try raw.scalarInt("SELECT count(*) FROM field_index") == indexed)
        // Listing, now served by the field index, finds every document, the empty one too; the old
        // document indexes are gone.
        let things = try CollectionPath("things")
        #expect(try await store.read { try $0.documents(in: things, after: nil, limit: 10).map(\.path.id) } == ["t0", "t1", "t2"])
        #expect(try await store.read { try $0.documents(in: things, after: "t0", limit: 1).map(\.path.id) } == ["t1"])
        #expect(try raw.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE 'documents_by_%'") == 0)
    }
}
