import HearthCore

/// How far `hearth import` got with one input file, committed in the transaction of each batch it writes,
/// so that the record and the documents can never disagree, whatever stops the import.
///
/// The input is known by its absolute path. So that a resume never continues a different file at a byte
/// offset that meant something else, the record keeps the file's first bytes and the bytes just before where
/// it stopped, and the importer compares both before it goes on; a file changed only after that point (a
/// malformed line fixed) resumes.
public struct ImportProgress: Sendable, Equatable {
    /// The input file's absolute path.
    public var source: String
    /// The file's first bytes before `offset` (at most `ImportProgress.sampleBytes`).
    public var head: [UInt8]
    /// The byte offset where the next batch starts.
    public var offset: Int64
    /// The line at `offset` (1-based).
    public var line: Int
    /// The bytes just before `offset` (at most `ImportProgress.sampleBytes`).
    public var before: [UInt8]
    /// Documents written so far.
    public var documents: Int
    /// Whether the whole file was imported.
    public var finished: Bool

    /// Bytes kept of the file's head and of what precedes the stopping point.
    public static let sampleBytes = 4_096

    /// Makes a record.
    public init(source: String, head: [UInt8], offset: Int64, line: Int, before: [UInt8], documents: Int, finished: Bool) {
        self.source = source
        self.head = head
        self.offset = offset
        self.line = line
        self.before = before
        self.documents = documents
        self.finished = finished
    }
}

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
