import HearthCore
import HearthStore

/// Loads fixture files into a database and exports a database as one. `hearth fixtures`, `hearth serve
/// --fixtures` and `--demo`, and HearthTesting all load data through this type.
public struct FixtureLoader: Sendable {
    /// What a load did.
    public struct Report: Sendable, Equatable {
        /// Documents created or replaced.
        public var written: Int
        /// Documents already stored with the fixture's content, left alone.
        public var unchanged: Int
    }

    /// The database loaded into or exported from.
    public let database: Database

    /// Makes a loader over a database.
    public init(database: Database) {
        self.database = database
    }

    /// Stores the fixture's documents as the admin. Idempotent: a document already stored with the same
    /// fields is not written again, so loading at every start neither bumps update times nor fills the
    /// change log. Accounts are not created here: they live in the account storage (see the callers).
    @discardableResult
    public func loadDocuments(_ fixture: FixtureFile) async throws -> Report {
        var writes: [Write] = []
        for (path, data) in fixture.documents { writes.append(try Write(kind: "set", path: path, data: data)) }
        let paths = writes.map(\.path)
        let stored = try await database.store.read { context in
            try paths.map { try context.document(at: $0)?.decoded().fields }
        }
        var needed: [Write] = []
        for (write, current) in zip(writes, stored) where !(write.transforms.isEmpty && current == write.fields) {
            needed.append(write)
        }
        // Chunks keep each commit within Firestore's write limit; a dataset is loaded before anyone reads it.
        var start = 0
        while start < needed.count {
            let chunk = Array(needed[start..<min(start + Limits.maxWritesPerCommit, needed.count)])
            _ = try await database.commit(CommitRequest(writes: chunk), as: .admin)
            start += chunk.count
        }
        return Report(written: needed.count, unchanged: writes.count - needed.count)
    }

    /// Makes the stored documents exactly the fixture's: deletes every other document, then loads the
    /// fixture (documents already equal stay untouched). Tests call it between cases.
    @discardableResult
    public func reset(to fixture: FixtureFile) async throws -> Report {
        let keep = Set(fixture.documents.map(\.path))
        let stale = try await export().documents.map(\.path).filter { !keep.contains($0) }
        var start = 0
        while start < stale.count {
            let chunk = stale[start..<min(start + Limits.maxWritesPerCommit, stale.count)]
            _ = try await database.commit(CommitRequest(writes: chunk.map { Write(kind: .delete, path: $0) }), as: .admin)
            start += chunk.count
        }
        return try await loadDocuments(fixture)
    }

    /// Every stored document, in path order, as a fixture (with the accounts given, which live elsewhere).
    public func export(users: [FixtureFile.User] = []) async throws -> FixtureFile {
        var documents: [(path: DocumentPath, data: JSON)] = []
        var after: String?
        let page = 1_000
        while true {
            let cursor = after
            let batch = try await database.store.read { try $0.allDocuments(after: cursor, limit: page) }
            for doc in batch { documents.append((doc.path, try JSON.parse(doc.data))) }
            guard batch.count == page, let last = batch.last else { break }
            after = last.path.description
        }
        return FixtureFile(users: users, documents: documents)
    }
}
