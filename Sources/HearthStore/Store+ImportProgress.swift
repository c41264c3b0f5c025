import HearthCore
import HearthSQLite

extension ReadContext {
    /// The progress recorded for an input file, if any.
    public func importProgress(source: String) throws -> ImportProgress? {
        let s = try connection.prepare("SELECT head, offset, line, before, documents, finished FROM imports WHERE source = ?")
        defer { s.reset() }
        s.bind(1, source)
        guard try s.step() else { return nil }
        return ImportProgress(source: source, head: s.blob(0), offset: s.int(1), line: Int(s.int(2)), before: s.blob(3),
                              documents: Int(s.int(4)), finished: s.int(5) != 0)
    }
}

extension WriteContext {
    /// Records an input file's progress, in the transaction of the batch it accounts for.
    public func record(_ progress: ImportProgress) throws {
        let s = try connection.prepare("""
            INSERT OR REPLACE INTO imports(source, head, offset, line, before, documents, finished) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        s.bind(1, progress.source); s.bind(2, progress.head); s.bind(3, progress.offset); s.bind(4, Int64(progress.line))
        s.bind(5, progress.before); s.bind(6, Int64(progress.documents)); s.bind(7, Int64(progress.finished ? 1 : 0))
        try s.run()
    }

    /// Forgets an input file's progress (an import started over).
    public func forgetImport(source: String) throws {
        let s = try connection.prepare("DELETE FROM imports WHERE source = ?")
        s.bind(1, source)
        try s.run()
    }
}
