import HearthCore
import HearthSQLite

/// Reads and writes inside the writer's transaction. Every document change appends its change-log row in
/// the same transaction.
public final class WriteContext {
    let connection: SQLiteConnection
    unowned let writer: WriterState
    var changes: [ChangeRecord] = []

    init(connection: SQLiteConnection, writer: WriterState) {
        self.connection = connection
        self.writer = writer
    }

    /// Reads in this transaction (seeing writes made earlier in it).
    public var reader: ReadContext { ReadContext(connection: connection, composites: writer.composites) }

    /// The decoded document at `path` as this transaction sees it, for a security rule's `get()`: from the
    /// store's cache of decoded documents unless this batch of commits has changed it.
    public func ruleLookup(_ path: DocumentPath) throws -> Document? {
        if writer.batchChanged.contains(path) { return try reader.document(at: path)?.decoded() }
        return try writer.documentCache.document(at: path) { try reader.document(at: path) }
    }

    /// A commit time later than every earlier commit's.
    public func nextCommitTime() -> Timestamp { writer.nextCommitTime() }

    /// Stores a document (insert or replace), updates its index entries and logs the change. Callers that hold
    /// the decoded fields use `put(_:fields:previous:commitTime:)`, which skips decoding.
    public func put(_ document: StoredDocument, commitTime: Timestamp) throws {
        let fields = try document.decoded().fields
        try put(document, fields: fields, previous: try storedFields(document.path), commitTime: commitTime)
    }

    func putRow(_ document: StoredDocument, commitTime: Timestamp) throws {
        let s = try connection.prepare(Self.putRowSQL)
        let path = document.path
        let pathText = path.description
        s.bindKept(1, pathText)
        s.bindKept(2, path.parent.description)
        s.bindKept(3, path.collectionID)
        s.bindKept(4, document.data)
        s.bind(5, document.createTime.microseconds)
        s.bind(6, document.updateTime.microseconds)
        try s.run()
        if path.segments.count > 2 {
            let nested = try connection.prepare(Self.nestedGroupSQL)
            nested.bind(1, path.collectionID)
            try nested.run()
        }
        try log(path: path, text: pathText, document: document, commitTime: commitTime)
    }

    /// Deletes a document (if present) with its index entries and logs the change. Returns whether it existed.
    @discardableResult
    public func delete(_ path: DocumentPath, commitTime: Timestamp) throws -> Bool {
        try delete(path, previous: try storedFields(path), commitTime: commitTime)
    }

    func deleteRow(_ path: DocumentPath, commitTime: Timestamp) throws -> Bool {
        let pathText = path.description
        let s = try connection.prepare("DELETE FROM documents WHERE path = ?")
        s.bind(1, pathText)
        try s.run()
        guard connection.changes > 0 else { return false }
        try log(path: path, text: pathText, document: nil, commitTime: commitTime)
        return true
    }

    // The statements every document write runs.
    static let putRowSQL = CachedSQL("""
        INSERT INTO documents(path, parent, collection_id, data, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(path) DO UPDATE SET data = excluded.data, create_time = excluded.create_time,
            update_time = excluded.update_time
        """)
    static let nestedGroupSQL = CachedSQL("INSERT OR IGNORE INTO nested_groups(collection_id) VALUES (?)")
    static let logSQL = CachedSQL("INSERT INTO changes(commit_time, path, data, create_time, update_time) VALUES (?, ?, ?, ?, ?)")

    /// Logs a change to `path` (`text` is its description).
    private func log(path: DocumentPath, text: String, document: StoredDocument?, commitTime: Timestamp) throws {
        let s = try connection.prepare(Self.logSQL)
        s.bind(1, commitTime.microseconds)
        s.bindKept(2, text)
        if let document {
            s.bindKept(3, document.data)
            s.bind(4, document.createTime.microseconds)
            s.bind(5, document.updateTime.microseconds)
        } else {
            s.bindNull(3); s.bindNull(4); s.bindNull(5)
        }
        try s.run()
        writer.batchChanged.insert(path)
        changes.append(ChangeRecord(sequence: connection.lastInsertRowID, commitTime: commitTime, path: path, document: document))
    }
}
