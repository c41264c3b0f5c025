import Foundation
import HearthCore
import HearthSQLite
@testable import HearthStore
import HearthTesting

/// Runs `body` with a store over a fresh temporary folder, then closes it and removes the folder.
func withTemporaryStore<T>(_ body: (Store) async throws -> T) async throws -> T {
    let directory = TestFolders.path("hearth-store")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try Store(configuration: .init(dataDirectory: directory))
    defer { store.close() }
    return try await body(store)
}

/// Stores `body` (wire JSON) at `path` in a commit of its own.
func put(_ path: String, _ body: String, in store: Store) async throws {
    try await store.write { context in
        let t = context.nextCommitTime()
        try context.put(StoredDocument(path: try DocumentPath(path), data: Array(body.utf8), createTime: t, updateTime: t),
                        commitTime: t)
    }
}

/// Makes the database at `path` as a build from before the field index left it: the schema of the migrations
/// before `Schema.fieldIndexVersion`, and `documents` (path, wire JSON) in the rows that build wrote. An upgrade
/// test opens a `Store` over it, which runs every later migration; the schema is built from the migrations
/// themselves, so adding one changes nothing here.
func makeDatabaseBeforeTheFieldIndex(at path: String, documents: [(path: String, json: String)]) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                            withIntermediateDirectories: true)
    let raw = try SQLiteConnection(path: path)
    let version = Schema.fieldIndexVersion - 1
    for migration in Schema.migrations.prefix(version) { try raw.execute(migration) }
    let insert = try raw.prepare("""
        INSERT INTO documents(path, parent, collection_id, data, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?)
        """)
    defer { insert.reset() }
    for (i, document) in documents.enumerated() {
        let documentPath = try DocumentPath(document.path)
        insert.bind(1, documentPath.description)
        insert.bind(2, documentPath.parent.description)
        insert.bind(3, documentPath.collectionID)
        insert.bind(4, Array(document.json.utf8))
        insert.bind(5, Int64(i + 1))
        insert.bind(6, Int64(i + 1))
        try insert.run()
    }
    try raw.execute("PRAGMA user_version = \(version)")
}
