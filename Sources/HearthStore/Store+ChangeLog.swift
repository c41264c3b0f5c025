import HearthCore
import HearthSQLite

extension Store {
    /// Runs a read inside one read transaction, so that everything it reads, and the change-log position it
    /// is given, describe one committed state. Listeners read their first result this way and apply only the
    /// changes after that position.
    public func readAtPosition<T: Sendable>(_ body: @escaping @Sendable (ReadContext, LogPosition) throws -> T) async throws -> T {
        try await read { context in
            try context.inSnapshot { try body(context, try context.logPosition()) }
        }
    }
}

extension ReadContext {
    /// The position of the last committed change (read inside a transaction to match the documents read).
    func logPosition() throws -> LogPosition {
        // sqlite_sequence keeps the highest sequence ever used, even when trimming emptied the log.
        let sequence = try connection.scalarInt("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0)") ?? 0
        let s = try connection.prepare("SELECT commit_time FROM changes WHERE seq = ?")
        defer { s.reset() }
        s.bind(1, sequence)
        if try s.step() { return LogPosition(sequence: sequence, commitTime: Timestamp(microseconds: s.int(0))) }
        let latest = try connection.scalarInt("SELECT coalesce(max(update_time), 0) FROM documents") ?? 0
        return LogPosition(sequence: sequence, commitTime: Timestamp(microseconds: latest))
    }

    /// The oldest sequence number the change log still holds, or nil when it is empty.
    public func oldestRetainedSequence() throws -> Int64? {
        try connection.scalarInt("SELECT min(seq) FROM changes")
    }

    /// The logged changes with `after < seq <= through`, in order.
    public func changes(after: Int64, through: Int64) throws -> [ChangeRecord] {
        let s = try connection.prepare(
            "SELECT seq, commit_time, path, data, create_time, update_time FROM changes WHERE seq > ? AND seq <= ? ORDER BY seq")
        defer { s.reset() }
        s.bind(1, after)
        s.bind(2, through)
        var out: [ChangeRecord] = []
        while try s.step() { out.append(Self.changeRecord(s)) }
        return out
    }

    /// The last logged change to a document at or before a sequence number, if the log still holds one.
    public func lastChange(to path: DocumentPath, atOrBefore sequence: Int64) throws -> ChangeRecord? {
        let s = try connection.prepare(
            "SELECT seq, commit_time, path, data, create_time, update_time FROM changes WHERE path = ? AND seq <= ? ORDER BY seq DESC LIMIT 1")
        defer { s.reset() }
        s.bind(1, path.description)
        s.bind(2, sequence)
        return try s.step() ? Self.changeRecord(s) : nil
    }

    static func changeRecord(_ s: Statement) -> ChangeRecord {
        let path = DocumentPath(uncheckedSegments: s.text(2).split(separator: "/", omittingEmptySubsequences: false).map(String.init))
        let document = s.isNull(3) ? nil : StoredDocument(path: path, data: s.blob(3), createTime: Timestamp(microseconds: s.int(4)),
                                                           updateTime: Timestamp(microseconds: s.int(5)))
        return ChangeRecord(sequence: s.int(0), commitTime: Timestamp(microseconds: s.int(1)), path: path, document: document)
    }
}

extension ReadContext {
    /// The logged change with this sequence number, if the log still holds it.
    public func change(atSequence sequence: Int64) throws -> ChangeRecord? {
        let s = try connection.prepare(
            "SELECT seq, commit_time, path, data, create_time, update_time FROM changes WHERE seq = ?")
        defer { s.reset() }
        s.bind(1, sequence)
        return try s.step() ? Self.changeRecord(s) : nil
    }
}
