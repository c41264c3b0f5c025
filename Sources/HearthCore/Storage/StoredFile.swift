/// One stored object's metadata, as the storage keeps it: the row that names its bytes by SHA-256.
public struct StoredFile: Sendable, Equatable {
    /// The object's name.
    public var path: FilePath
    /// Changes whenever the bytes are replaced (the commit time in microseconds, so it only grows).
    public var generation: Int64
    /// Counts metadata changes within a generation, from 1.
    public var metageneration: Int64
    /// Size in bytes.
    public var size: Int64
    /// The declared content type.
    public var contentType: String
    /// SHA-256 of the bytes: the name of the blob that holds them.
    public var sha256: [UInt8]
    /// MD5 of the bytes (rules' `md5Hash`, base64 there).
    public var md5: [UInt8]
    /// When this generation was created (Cloud Storage's `timeCreated`: a replacement is created anew).
    public var createTime: Timestamp
    /// When the bytes or metadata last changed.
    public var updateTime: Timestamp
    /// Custom metadata.
    public var metadata: [String: String]
    /// SHA-256 of the download token: the token itself is never stored.
    public var tokenHash: [UInt8]

    /// Makes metadata.
    public init(path: FilePath, generation: Int64, metageneration: Int64, size: Int64, contentType: String,
                sha256: [UInt8], md5: [UInt8], createTime: Timestamp, updateTime: Timestamp,
                metadata: [String: String], tokenHash: [UInt8]) {
        self.path = path
        self.generation = generation
        self.metageneration = metageneration
        self.size = size
        self.contentType = contentType
        self.sha256 = sha256
        self.md5 = md5
        self.createTime = createTime
        self.updateTime = updateTime
        self.metadata = metadata
        self.tokenHash = tokenHash
    }

    /// The entity tag: changes with the generation and the metageneration, so a metadata change is a new
    /// version for `If-Match` too.
    public var etag: String { "\(generation)-\(metageneration)" }

    /// The SHA-256 as lowercase hex: the blob's file name.
    public var sha256Hex: String { Self.hex(sha256) }

    /// Lowercase hex of bytes.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// One page of a listing by prefix: the objects directly named, and with a delimiter the common prefixes
/// that stand for the names below them (Cloud Storage's `prefixes`).
public struct FileListing: Sendable, Equatable {
    /// The objects, in name order.
    public var files: [StoredFile]
    /// The common prefixes, each ending with the delimiter, in order.
    public var prefixes: [String]
    /// Where the next page starts, when there is one.
    public var nextPageToken: String?

    /// Makes a listing page.
    public init(files: [StoredFile], prefixes: [String], nextPageToken: String?) {
        self.files = files
        self.prefixes = prefixes
        self.nextPageToken = nextPageToken
    }
}

extension StoredFile {
    /// The metadata as the file API answers it (`{"path", "size", "contentType", "etag", "sha256", "md5Hash",
    /// "generation", "metageneration", "createTime", "updateTime", "metadata"}`), which function events carry
    /// too; `downloadToken` only when it was just issued (only its hash is kept).
    public func write(to w: inout JSONWriter, downloadToken: String? = nil) {
        w.raw("{\"path\":")
        w.string(path.name)
        w.raw(",\"size\":\(size),\"contentType\":")
        w.string(contentType)
        w.raw(",\"etag\":")
        w.string(etag)
        w.raw(",\"sha256\":\"\(sha256Hex)\",\"md5Hash\":")
        w.string(Base64.encode(md5))
        w.raw(",\"generation\":\(generation),\"metageneration\":\(metageneration),\"createTime\":\"")
        w.rfc3339(createTime)
        w.raw("\",\"updateTime\":\"")
        w.rfc3339(updateTime)
        w.raw("\",\"metadata\":{")
        for (i, key) in metadata.keys.sorted().enumerated() {
            if i > 0 { w.raw(",") }
            w.string(key)
            w.raw(":")
            w.string(metadata[key]!)
        }
        w.raw("}")
        if let downloadToken {
            w.raw(",\"downloadToken\":")
            w.string(downloadToken)
        }
        w.raw("}")
    }
}
