import HearthCore

/// Where stored objects' bytes live, named by their SHA-256 so identical bytes are stored once. The metadata
/// that names them is the document storage's (`DocumentWriter.putFile`); the order of the two is what keeps
/// a crash harmless: bytes are durable under their name before any metadata row names them, and bytes no
/// row names are removed (`release`, and `sweep` after a crash).
///
/// Between `store` and the commit of the row that names a blob (or the decision not to write it), the blob is
/// pinned: `release` and `sweep` never remove a pinned blob, so two uploads of the same bytes, or an upload
/// and a delete, cannot remove bytes a row is about to name.
public protocol BlobStorage: AnyObject, Sendable {
    /// Writes the chunks to a new temporary file, hashing as it goes, and stores them under their SHA-256 (or
    /// drops them when those bytes are stored already), durable under that name and pinned until `unpin`; then
    /// runs `next` with the blob, on the thread that made it durable (it must not block), and returns what
    /// `next` completes with. Refuses, storing nothing and never running `next`, once more than `maxSize` bytes
    /// arrive, when the chunks fail (a client gone mid-upload), or when their SHA-256 is not `expectedSHA256`.
    func store<T: Sendable>(_ chunks: ByteChunks, maxSize: Int64, expectedSHA256: [UInt8]?,
                            then next: @escaping @Sendable (StoredBlob, @escaping @Sendable (Result<T, any Error>) -> Void) -> Void)
        async throws -> T
    /// Keeps a blob from being removed until as many `unpin`s.
    func pin(_ sha256: [UInt8])
    /// Ends one `pin` or `store`.
    func unpin(_ sha256: [UInt8])
    /// Opens a blob for reading; nil when it is not stored.
    func open(_ sha256: [UInt8]) throws -> (any BlobHandle)?
    /// Removes a blob, and what was derived from it, unless it is pinned or `isNamed` says an object still
    /// names it.
    func release(_ sha256: [UInt8], isNamed: ([UInt8]) throws -> Bool) throws
    /// Removes every temporary file, every blob `isNamed` says no object names, and what was derived from a
    /// blob no longer stored: what a crash left.
    func sweep(isNamed: ([UInt8]) throws -> Bool) throws -> BlobSweep
    /// Opens bytes derived from a blob (a thumbnail), by their name; nil when none are kept.
    func openDerived(from sha256: [UInt8], name: String) throws -> (any BlobHandle)?
    /// Keeps bytes derived from a blob under `name` (written to a temporary file, synced and renamed into
    /// place); they go when the blob goes. Keeps nothing, and returns false, when the blob is no longer stored.
    func keepDerived(from sha256: [UInt8], name: String, bytes: [UInt8]) throws -> Bool
}

extension BlobStorage {
    /// `store(_:maxSize:expectedSHA256:then:)` with nothing after it: the blob, durable and pinned.
    public func store(_ chunks: ByteChunks, maxSize: Int64, expectedSHA256: [UInt8]?) async throws -> StoredBlob {
        try await store(chunks, maxSize: maxSize, expectedSHA256: expectedSHA256) { stored, done in done(.success(stored)) }
    }
}

/// Bytes stored under their SHA-256, with their digests.
public struct StoredBlob: Sendable {
    /// SHA-256 of the bytes.
    public let sha256: [UInt8]
    /// MD5 of the bytes (Cloud Storage's `md5Hash`).
    public let md5: [UInt8]
    /// How many bytes.
    public let size: Int64
}

/// What a sweep removed.
public struct BlobSweep: Sendable, Equatable {
    /// Temporary files of uploads that never finished.
    public var temporaryFiles: Int
    /// Blobs no object named.
    public var blobs: Int
    /// Sets of derived bytes (thumbnails) whose blob was gone.
    public var derived: Int

    public init(temporaryFiles: Int, blobs: Int, derived: Int = 0) {
        self.temporaryFiles = temporaryFiles
        self.blobs = blobs
        self.derived = derived
    }
}

/// An open blob: reads by offset, closed when the last reference goes.
public protocol BlobHandle: AnyObject, Sendable {
    /// The blob's size in bytes.
    var size: Int64 { get }
    /// Fills `buffer` with the bytes from `offset` and answers how many it holds (fewer only at the end):
    /// the one read, into memory the caller owns, so a download reads straight into the buffer it sends.
    func read(offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// The open file that holds the bytes, when a file does (a download sends them from it with `sendfile(2)`);
    /// it stays open as long as the handle.
    var descriptor: Int32? { get }
}

extension BlobHandle {
    /// Up to `count` bytes from `offset` (fewer only at the end).
    public func read(offset: Int64, count: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = try read(offset: offset, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// The bytes of `range` as chunks of at most `chunkSize`, read as they are consumed; `offPool` reads each
    /// chunk on the blocking-I/O pool instead of the consuming task's thread.
    public func chunks(_ range: Range<Int64>, chunkSize: Int = 64 * 1024, offPool: Bool = false) -> ByteChunks {
        let position = Position(range.lowerBound)
        return ByteChunks { [self] in
            let offset = position.value
            guard offset < range.upperBound else { return nil }
            let count = Int(min(Int64(chunkSize), range.upperBound - offset))
            let bytes = offPool ? try await BlockingIO.run { try self.read(offset: offset, count: count) }
                                : try read(offset: offset, count: count)
            guard bytes.count == count else {
                throw HearthError.internal("stored bytes ended at \(offset + Int64(bytes.count)) of \(range.upperBound)")
            }
            position.value = offset + Int64(count)
            return bytes
        }
    }
}

/// A read position advanced by the one task consuming the chunks.
private final class Position: @unchecked Sendable {
    var value: Int64
    init(_ value: Int64) { self.value = value }
}
