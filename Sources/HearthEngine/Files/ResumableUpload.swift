import HearthCore

/// An upload in progress (tus, docs/api.md, Resumable uploads): the object it will become, how many of its
/// bytes are in, who may continue it and until when. Kept durably beside its bytes (`UploadStorage`); the
/// object exists only once the last byte is in and the put of those bytes commits.
public struct ResumableUpload: Sendable, Equatable, Codable {
    /// Unguessable: 128 random bits, in hex. Knowing it is not enough to continue the upload; the caller
    /// must also be its creator.
    public var id: String
    /// The object's name once finished.
    public var path: String
    /// The declared content type; nil for the default.
    public var contentType: String?
    /// Custom metadata of the object.
    public var metadata: [String: String]
    /// The object's size, declared at creation.
    public var length: Int64
    /// How many bytes are in and synced.
    public var offset: Int64
    /// Who created it (`Identity.uploadOwner`).
    public var creator: String
    /// When it was created, in microseconds since 1970.
    public var createTime: Int64
    /// When it expires, in microseconds since 1970: it is refused after, and removed by the next sweep.
    public var expireTime: Int64

    /// Whether it expired at `now`.
    public func expired(at now: Timestamp) -> Bool { now.microseconds >= expireTime }

    /// A new id: 128 bits from the system's CSPRNG.
    public static func makeID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Whether `text` could be an id this server made (checked before it names a file).
    public static func isWellFormedID(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

extension Identity {
    /// Who owns an upload: the same caller, whatever their token's other claims, may continue it.
    var uploadOwner: String {
        switch self {
        case .admin: return "admin"
        case .unauthenticated: return "anonymous"
        case .user(let uid, _): return "user:" + uid
        }
    }
}

/// The start of an upload (tus creation).
public struct UploadStart: Sendable {
    /// The object's name.
    public var path: FilePath
    /// The declared content type; nil for the default.
    public var contentType: String?
    /// Custom metadata.
    public var metadata: [String: String]
    /// The object's size.
    public var length: Int64
    /// The largest object accepted (`--max-file-size`).
    public var maxSize: Int64
    /// How long the upload may take before it expires.
    public var lifetime: Duration

    /// Makes a start.
    public init(path: FilePath, contentType: String? = nil, metadata: [String: String] = [:], length: Int64,
                maxSize: Int64, lifetime: Duration) {
        self.path = path
        self.contentType = contentType
        self.metadata = metadata
        self.length = length
        self.maxSize = maxSize
        self.lifetime = lifetime
    }
}

/// Bytes for an upload, at an offset (a tus `PATCH`).
public struct UploadAppend: Sendable {
    /// The upload.
    public var id: String
    /// Where the bytes go: must be the upload's offset.
    public var offset: Int64
    /// The bytes, read once as they arrive.
    public var bytes: ByteChunks
    /// The checksum the bytes must have (`Upload-Checksum`); on a mismatch none of them is kept.
    public var checksum: UploadChecksum?
    /// How many bytes the request announced (`Content-Length`): past the upload's length, it is refused
    /// before any is read.
    public var announcedLength: Int64?

    /// Makes an append.
    public init(id: String, offset: Int64, bytes: ByteChunks, checksum: UploadChecksum? = nil, announcedLength: Int64? = nil) {
        self.id = id
        self.offset = offset
        self.bytes = bytes
        self.checksum = checksum
        self.announcedLength = announcedLength
    }
}

/// A checksum of one request's bytes (tus checksum extension).
public struct UploadChecksum: Sendable, Equatable {
    /// The algorithms served, by their tus names.
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1
        case sha256
    }

    /// The algorithm.
    public var algorithm: Algorithm
    /// The digest the bytes must have.
    public var digest: [UInt8]

    /// Makes a checksum.
    public init(algorithm: Algorithm, digest: [UInt8]) {
        self.algorithm = algorithm
        self.digest = digest
    }
}

/// Where an upload stands after a call; `written` is the object, once the last byte made it.
public struct UploadStatus: Sendable {
    /// The upload.
    public var upload: ResumableUpload
    /// The object stored by the call that brought the last byte.
    public var written: FileWritten?
}

/// What an upload call is refused for beyond `HearthError`'s codes, since tus gives them statuses of their own.
public struct UploadRefusal: Error, Sendable, Equatable {
    /// The reason.
    public enum Kind: Sendable, Equatable {
        /// The upload expired (tus: 410 Gone).
        case expired
        /// The bytes do not have the checksum announced (tus: 460); none of them was kept.
        case checksumMismatch
    }

    /// The reason.
    public var kind: Kind
    /// What was wrong, for the caller.
    public var message: String
}
