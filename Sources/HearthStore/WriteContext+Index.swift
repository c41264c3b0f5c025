import HearthCore
import HearthSQLite

/// Field-index maintenance, in the same SQLite transaction as the document change.
extension WriteContext {
    /// Stores a document whose fields the caller already holds, updating only the index entries that differ
    /// from `previous` (the fields stored before, or nil when the document did not exist). `entries`, when
    /// given, are those of `fields` (`Store.indexEntries`), made before the transaction.
    public func put(_ document: StoredDocument, fields: [String: Value], entries prepared: Store.PreparedEntries? = nil,
                    previous: [String: Value]?, commitTime: Timestamp) throws {
        let new = try prepared?.entries ?? entries(of: fields, at: document.path)
        try putRow(document, commitTime: commitTime)
        guard let previous else {
            try updateIndex(document.path, removing: [], adding: new)
            return
        }
        let old = try entries(of: previous, at: document.path, stored: true)
        try updateIndex(document.path, removing: old.subtracting(new), adding: new.subtracting(old))
    }

    /// Deletes a document whose stored fields the caller already holds (nil: known missing). Returns whether it
    /// existed.
    @discardableResult
    public func delete(_ path: DocumentPath, previous: [String: Value]?, commitTime: Timestamp) throws -> Bool {
        guard try deleteRow(path, commitTime: commitTime) else { return false }
        if let previous { try updateIndex(path, removing: try entries(of: previous, at: path, stored: true), adding: []) }
        return true
    }

    /// A document's field-index entries, with those of the composite indexes of its collection id. The
    /// per-document limit counts both, as Firestore's does; it is not checked again for `stored` fields (an
    /// index added later must not make a stored document impossible to update or delete).
    func entries(of fields: [String: Value], at path: DocumentPath, stored: Bool = false) throws(HearthError) -> Set<IndexEntry> {
        try Self.entries(of: fields, at: path, composites: writer.composites, limit: stored ? Int.max : writer.maxIndexEntries)
    }

    /// A document's entries under the given definitions (see `entries(of:at:stored:)`).
    static func entries(of fields: [String: Value], at path: DocumentPath, composites definitions: CompositeIndexes,
                        limit: Int) throws(HearthError) -> Set<IndexEntry> {
        var entries = try IndexEntry.entries(of: fields, limit: limit, overrides: definitions.overrides(of: path.collectionID))
        let composites = definitions.of(path.collectionID)
        if !composites.isEmpty {
            entries.formUnion(IndexEntry.compositeEntries(of: fields, indexes: composites))
            if entries.count > limit {
                throw .invalidArgument(
                    "the document needs \(entries.count) index entries with the composite indexes of '\(path.collectionID)'; "
                        + "the limit is \(limit)")
            }
        }
        return entries
    }

    /// The stored fields of a document, for callers that do not hold them.
    func storedFields(_ path: DocumentPath) throws -> [String: Value]? {
        try reader.document(at: path)?.decoded().fields
    }

    func updateIndex(_ path: DocumentPath, removing: Set<IndexEntry>, adding: Set<IndexEntry>) throws {
        try Self.updateIndex(on: connection, path, removing: removing, adding: adding)
    }

    /// Index maintenance on a connection inside a write transaction (also used by the migration that
    /// indexes documents stored before the field index existed).
    static func updateIndex(on connection: SQLiteConnection, _ path: DocumentPath, removing: Set<IndexEntry>,
                            adding: Set<IndexEntry>) throws {
        if removing.isEmpty && adding.isEmpty { return }
        let scopes = IndexEntry.scopes(of: path)
        if !removing.isEmpty {
            let s = try connection.prepare(deleteRowSQL)
            for (scope, doc) in scopes {
                for entry in removing {
                    s.bind(1, scope); s.bind(2, entry.field); s.bind(3, entry.key); s.bind(4, doc)
                    try s.run()
                }
            }
        }
        if !adding.isEmpty {
            // Several rows per statement: a document's rows cost one statement's start and end, not one each.
            var left = scopes.count * adding.count
            var s = try connection.prepare(insertRowsSQL[min(left, insertRowsSQL.count) - 1])
            var bound: Int32 = 0
            for (scope, doc) in scopes {
                for entry in adding {
                    s.bindKept(bound + 1, scope); s.bindKept(bound + 2, entry.field)
                    s.bindKept(bound + 3, entry.key); s.bindKept(bound + 4, doc)
                    bound += 4
                    left -= 1
                    if bound == s.parameterCount {
                        try s.run()
                        bound = 0
                        if left > 0 { s = try connection.prepare(insertRowsSQL[min(left, insertRowsSQL.count) - 1]) }
                    }
                }
            }
        }
    }

    /// The statements that add 1, 2, ... field-index rows at once.
    static let insertRowsSQL: [CachedSQL] = (1...16).map { n in
        CachedSQL("INSERT OR IGNORE INTO field_index(scope, field, key, doc) VALUES "
                  + Array(repeating: "(?, ?, ?, ?)", count: n).joined(separator: ", "))
    }
    static let deleteRowSQL = CachedSQL("DELETE FROM field_index WHERE scope = ? AND field = ? AND key = ? AND doc = ?")
}

extension Store {
    /// A document's field-index entries, made before the writer's transaction (`indexEntries(of:at:)`).
    public struct PreparedEntries: Sendable {
        let entries: Set<IndexEntry>
    }

    /// The field-index entries of a document with these fields at `path`, as a put in this store would make
    /// them (the index definitions are fixed while the store is open), on the calling thread.
    public func indexEntries(of fields: [String: Value], at path: DocumentPath) throws(HearthError) -> PreparedEntries {
        PreparedEntries(entries: try WriteContext.entries(of: fields, at: path, composites: composites,
                                                          limit: configuration.maxIndexEntriesPerDocument))
    }
}
