import HearthCore
import HearthImages
import NIOCore

/// What a caller asks of the stored objects (`DatabaseOperation.file`), whichever way the request came in.
public enum FileOperation: Sendable {
    /// Create or replace an object from streamed bytes. Performed by `Database.perform(_:as:) async`, in the
    /// caller's task, since it reads its bytes as they arrive.
    case put(FileUpload)
    /// Read an object: its metadata and a way to read its bytes. With a download token that matches the
    /// object's, the rules are not asked (Firebase's download URL).
    case get(FilePath, token: String?)
    /// Read a thumbnail of an image object, fitting the box: a read of the object (its `get` rule, or its
    /// download token), made once and kept. Performed by `Database.perform(_:as:) async`, in the caller's task.
    case thumbnail(FilePath, token: String?, size: ThumbnailSize)
    /// Change an object's content type or custom metadata, or rotate its download token.
    case update(FilePath, FileMetadataChange)
    /// Delete an object; done also when it is missing.
    case delete(FilePath, ifMatch: String?)
    /// One page of the objects under a prefix.
    case list(FileListRequest)
    /// Start a resumable upload: the rules decide the object as declared (size, content type, metadata)
    /// before any byte is sent.
    case startUpload(UploadStart)
    /// Bytes for a resumable upload, at its offset; the last byte makes the object, by a put of the
    /// upload's bytes. Performed in the caller's task, like a put.
    case appendUpload(UploadAppend)
    /// Where a resumable upload stands (its offset).
    case uploadStatus(id: String)
    /// Give up a resumable upload: its bytes are removed.
    case cancelUpload(id: String)

    /// Whether it writes.
    public var writes: Bool {
        switch self {
        case .put, .update, .delete, .startUpload, .appendUpload, .cancelUpload: return true
        case .get, .thumbnail, .list, .uploadStatus: return false
        }
    }
}

/// A put: the object's name, attributes and bytes, and its preconditions.
public struct FileUpload: Sendable {
    /// The content type given to a put without one.
    public static let defaultContentType = "application/octet-stream"

    /// The object's name.
    public var path: FilePath
    /// The declared content type (`request.resource.contentType`); nil for the default.
    public var contentType: String?
    /// Custom metadata.
    public var metadata: [String: String]
    /// The bytes, read once.
    public var bytes: ByteChunks
    /// More bytes than this are refused (`payload-too-large`), and nothing is stored.
    public var maxSize: Int64
    /// The stored object's etag must be this (`If-Match`).
    public var ifMatch: String?
    /// The object must not exist (`If-None-Match: *`).
    public var ifNoneMatch: Bool
    /// The SHA-256 the bytes must have, checked once they are in.
    public var sha256: [UInt8]?

    /// Makes a put.
    public init(path: FilePath, contentType: String? = nil, metadata: [String: String] = [:], bytes: ByteChunks,
                maxSize: Int64, ifMatch: String? = nil, ifNoneMatch: Bool = false, sha256: [UInt8]? = nil) {
        self.path = path
        self.contentType = contentType
        self.metadata = metadata
        self.bytes = bytes
        self.maxSize = maxSize
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.sha256 = sha256
    }
}

/// A change of an object's metadata; the bytes stay.
public struct FileMetadataChange: Sendable {
    /// The new content type, or nil to keep it.
    public var contentType: String?
    /// The new custom metadata (replacing all of it), or nil to keep it.
    public var metadata: [String: String]?
    /// Issue a new download token: links with the old one stop working.
    public var rotateDownloadToken: Bool
    /// The stored object's etag must be this.
    public var ifMatch: String?

    /// Makes a change.
    public init(contentType: String? = nil, metadata: [String: String]? = nil, rotateDownloadToken: Bool = false,
                ifMatch: String? = nil) {
        self.contentType = contentType
        self.metadata = metadata
        self.rotateDownloadToken = rotateDownloadToken
        self.ifMatch = ifMatch
    }
}

/// A listing by prefix, Cloud Storage's way: with a delimiter, names with the delimiter after the prefix
/// are rolled up into common prefixes.
public struct FileListRequest: Sendable {
    /// Most entries (objects and prefixes) a page may hold.
    public static let maxPageSize = 1_000

    /// Only names that start with this (any string, not only whole segments).
    public var prefix: String
    /// Usually `/`; nil or empty lists every name under the prefix.
    public var delimiter: String?
    /// Most entries (objects plus prefixes) in the page, 1 to 1,000.
    public var pageSize: Int
    /// Where to go on, from an earlier page's `nextPageToken`.
    public var pageToken: String?

    /// Makes a listing request.
    public init(prefix: String = "", delimiter: String? = nil, pageSize: Int = maxPageSize, pageToken: String? = nil) {
        self.prefix = prefix
        self.delimiter = delimiter
        self.pageSize = pageSize
        self.pageToken = pageToken
    }
}

/// What a file operation came to.
public enum FileOutcome: Sendable {
    /// A put or a metadata change.
    case written(FileWritten)
    /// A read.
    case read(FileRead)
    /// A delete: whether the object existed.
    case deleted(existed: Bool)
    /// A page of a listing.
    case listed(FileListing)
    /// Where a resumable upload stands.
    case upload(UploadStatus)
}

/// An object written.
public struct FileWritten: Sendable {
    /// Its metadata after the write.
    public var file: StoredFile
    /// True when the put created it (201), false when it replaced or changed one (200).
    public var created: Bool
    /// The new download token, in clear: given once, when issued (by a put, or a rotation); only its hash is
    /// stored.
    public var downloadToken: String?
}

/// An object read: its metadata and its bytes, open (a later replacement or delete does not tear them).
public struct FileRead: Sendable {
    /// The metadata.
    public var file: StoredFile
    /// The open bytes: the object's, or its thumbnail's.
    public let handle: any BlobHandle
    /// What the bytes are when they are a thumbnail of the object; nil for the object's own.
    public var thumbnail: FileThumbnail?

    /// The bytes of `range` (all of them when nil), read as they are consumed.
    public func bytes(_ range: Range<Int64>? = nil) -> FileBytes {
        FileBytes(handle: handle, range: range ?? 0..<handle.size)
    }
}

/// An object's bytes as buffers, each read from the open blob straight into the buffer that is sent, when the
/// one before is consumed: memory holds a chunk or two, never the object, and no byte is copied twice.
public struct FileBytes: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer

    /// The largest chunk: a few of these in flight per download bound its memory, while a 100 KiB image is one
    /// read and one write, and a large object takes few trips through the channel.
    public static let chunkSize = 1 << 20

    /// The open bytes and the part of them served.
    package let handle: any BlobHandle
    package let range: Range<Int64>

    package init(handle: any BlobHandle, range: Range<Int64>) {
        self.handle = handle
        self.range = range
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle, offset: range.lowerBound, end: range.upperBound) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let handle: any BlobHandle
        var offset: Int64
        let end: Int64
        /// The buffers handed out, reused in turn: the oldest has left through the socket by the time it comes
        /// round again (unless the consumer still holds it, when `clear` gives fresh memory), so a download
        /// neither allocates nor faults in a new megabyte per chunk.
        var buffers: [ByteBuffer?] = []
        var turn = 0

        init(handle: any BlobHandle, offset: Int64, end: Int64) {
            self.handle = handle
            self.offset = offset
            self.end = end
        }

        public mutating func next() async throws -> ByteBuffer? {
            guard offset < end else { return nil }
            let count = Int(Swift.min(Int64(FileBytes.chunkSize), end - offset))
            var buffer: ByteBuffer
            let slot = turn
            if buffers.count < FileBytes.buffersReused {
                buffer = FileBytes.allocator.buffer(capacity: count)
            } else {
                // Out of the array first, so that `clear` finds it unique unless the channel still holds it.
                buffer = buffers[slot]!
                buffers[slot] = nil
                buffer.clear(minimumCapacity: count)
                turn = (slot + 1) % buffers.count
            }
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { [handle, offset] space in
                try handle.read(offset: offset, into: UnsafeMutableRawBufferPointer(rebasing: space.prefix(count)))
            }
            guard read == count else {
                throw HearthError.internal("stored bytes ended at \(offset + Int64(read)) of \(end)")
            }
            offset += Int64(count)
            if offset < end {
                if buffers.count < FileBytes.buffersReused { buffers.append(buffer) } else { buffers[slot] = buffer }
            }
            return buffer
        }
    }

    /// Buffers a download cycles through.
    static let buffersReused = 3

    static let allocator = ByteBufferAllocator()

    /// Every byte joined (for tests and small objects only: memory grows with the size).
    public func collect() async throws -> [UInt8] {
        var out: [UInt8] = []
        for try await buffer in self { out += buffer.readableBytesView }
        return out
    }
}

/// A thumbnail read in place of an object's bytes.
public struct FileThumbnail: Sendable {
    /// The box it fits in.
    public var size: ThumbnailSize
    /// Its format.
    public var format: ImageFormat
}
