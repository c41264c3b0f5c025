import Foundation
import HearthCore
import HearthStore
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
