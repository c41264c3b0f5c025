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
