import HearthCore

/// What the engine needs of the storage underneath: reads on the storage's own threads or on the caller's,
/// writes as jobs of its one writer, and the committed changes in commit order. The SQLite store is one
/// implementation (`SQLiteDocumentStorage`); the engine and everything above it know only this protocol.
public protocol DocumentStorage: AnyObject, Sendable {
    /// Runs a read that may scan (a listing, a query) on a reader thread; `completion` runs once, there, with
    /// the result, and must not block. Reads see the last committed state, field index included.
    func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T,
                           completion: @escaping @Sendable (Result<T, any Error>) -> Void)
    /// Runs a short, bounded read (a lookup by key) on the calling thread.
    func pointRead<T>(_ body: (any DocumentReader) throws -> T) throws -> T
    /// Runs a read on the calling thread that stops with `ReadBudgetExceeded` once it has done about
    /// `instructions` units of work; the caller may then run it again with `read`.
    func boundedRead<T>(instructions: Int, _ body: (any DocumentReader) throws -> T) throws -> T
    /// Runs a read inside one snapshot, with the change-log position that snapshot stands at.
    func readAtPosition<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader, LogPosition) throws -> T) async throws -> T
    /// Runs a write job on the writer, inside a transaction shared with other queued jobs; the job's effects
    /// are rolled back alone if it throws. `completion` runs once, when the commit is durable or the job
    /// failed, and must not block.
    func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentWriter) throws -> T,
                            completion: @escaping @Sendable (Result<T, any Error>) -> Void)
    /// The forms a document with these fields at `path` is stored in, made on the calling thread for a later
    /// `DocumentWriter.put`; nil when they cannot be (the put then makes them, and reports why).
    func prepare(_ fields: [String: Value], at path: DocumentPath) -> PreparedFields?
    /// The decoded document at `path` (nil when missing), for a rule's `get()` or `exists()` outside a
    /// transaction, on the calling thread.
    func ruleLookup(_ path: DocumentPath) throws -> Document?
    /// Adds an observer told of every committed change, in commit order, after the commit is durable; it is
    /// kept until removed, and observers are told in the order they were added.
    func add(commitObserver observer: any CommitObserver)
    /// Stops telling an observer of commits.
    func remove(commitObserver observer: any CommitObserver)
    /// Records where the server that holds the data folder answers (and, for HTTPS, the absolute path of the
    /// certificate file it serves), so that tools act through it.
    func recordOwnerAddress(_ address: String, certificate: String?)
    /// Finishes queued work and releases the storage.
    func close()
    /// Documents fetched by scans (queries, aggregations, listings, listener loads) since the storage opened.
    var documentsScanned: Int { get }
    /// The storage's size on disk, in bytes.
    func sizeOnDisk() -> Int64
    /// Where stored objects' bytes live; their metadata is in this storage (`DocumentReader.file(at:)`).
    var blobs: any BlobStorage { get }
    /// Where resumable uploads in progress live, apart from stored objects until their last byte is in.
    var uploads: any UploadStorage { get }
}

extension DocumentStorage {
    /// Removes what a crash may have left of stored objects' bytes: temporary files, and blobs no object
    /// names. Only the folder's owner may run it (a temporary file may be another writer's upload in flight).
    @discardableResult
    public func sweepBlobs() throws -> BlobSweep {
        try blobs.sweep { sha256 in try pointRead { try $0.fileBlobNamed(sha256) } }
    }

    /// `read(_:completion:)` for callers that are tasks.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            read(body) { continuation.resume(with: $0) }
        }
    }

    /// `write(_:completion:)` for callers that are tasks.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentWriter) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            write(body) { continuation.resume(with: $0) }
        }
    }
}
