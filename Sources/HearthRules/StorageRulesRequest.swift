import HearthCore

/// A stored object as storage rules see it in `resource` and `request.resource` (Firebase's storage rules
/// reference): its name, bucket, size, content type, MD5, times, generations and custom metadata.
public struct StorageObject: Sendable, Equatable {
    /// The object's full path, `avatars/alice/me.jpg`.
    public var name: String
    /// The bucket; Hearth has one, `default`.
    public var bucket: String
    /// Size in bytes.
    public var size: Int64
    /// The declared content type.
    public var contentType: String
    /// The MD5 of the bytes, base64 (as Cloud Storage gives it).
    public var md5Hash: String
    /// When the object was first created.
    public var timeCreated: Timestamp
    /// When the object (bytes or metadata) last changed.
    public var updated: Timestamp
    /// Changes whenever the bytes are replaced.
    public var generation: Int64
    /// Counts metadata changes within a generation, from 1.
    public var metageneration: Int64
    /// The entity tag of this generation and metageneration.
    public var etag: String
    /// Custom metadata: string keys and values.
    public var metadata: [String: String]

    /// Makes an object.
    public init(name: String, bucket: String = RulesLimits.bucketID, size: Int64, contentType: String, md5Hash: String,
                timeCreated: Timestamp, updated: Timestamp, generation: Int64, metageneration: Int64, etag: String,
                metadata: [String: String]) {
        self.name = name
        self.bucket = bucket
        self.size = size
        self.contentType = contentType
        self.md5Hash = md5Hash
        self.timeCreated = timeCreated
        self.updated = updated
        self.generation = generation
        self.metageneration = metageneration
        self.etag = etag
        self.metadata = metadata
    }
}

/// One request on stored objects to authorize with the `service firebase.storage` rules.
public struct StorageRulesRequest: Sendable {
    /// `get` (download or metadata), `list`, `create`, `update` (bytes or metadata) or `delete`.
    public var method: RulesMethod
    /// The bucket, `default`.
    public var bucket: String
    /// The object's path; for `list`, the prefix listed (its segments are matched, a trailing `/` dropped).
    public var name: String
    /// The caller; nil when unauthenticated.
    public var auth: RulesAuth?
    /// `request.time`.
    public var time: Timestamp
    /// The stored object (`resource`); nil on create, and for a missing object.
    public var resource: StorageObject?
    /// The object after the write (`request.resource`), for create and update.
    public var requestResource: StorageObject?

    /// Makes a request.
    public init(method: RulesMethod, name: String, auth: RulesAuth? = nil, time: Timestamp,
                resource: StorageObject? = nil, requestResource: StorageObject? = nil,
                bucket: String = RulesLimits.bucketID) {
        self.method = method
        self.bucket = bucket
        self.name = name
        self.auth = auth
        self.time = time
        self.resource = resource
        self.requestResource = requestResource
    }

    /// The segments the `match` blocks under `/b/{bucket}/o` see: the name split at `/` (a listed prefix
    /// without its trailing `/`; the root listing has none).
    var segments: [String] {
        var text = Substring(name)
        if method == .list, text.hasSuffix("/") { text = text.dropLast() }
        if text.isEmpty { return [] }
        return text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// `/b/{bucket}/o/...`: the object's path as rules see it in `request.path`.
    var rulesPath: [String] { ["b", bucket, "o"] + segments }
}

/// A stored object as a rules map: reading one key converts only that key.
final class LazyStorageObject: LazyMap {
    let object: StorageObject

    init(_ object: StorageObject) { self.object = object }

    static let keys = ["name", "bucket", "size", "contentType", "md5Hash", "timeCreated", "updated", "generation",
                       "metageneration", "etag", "metadata"]

    subscript(key: String) -> RulesValue? {
        switch key {
        case "name": return .string(object.name)
        case "bucket": return .string(object.bucket)
        case "size": return .int(object.size)
        case "contentType": return .string(object.contentType)
        case "md5Hash": return .string(object.md5Hash)
        case "timeCreated": return .timestamp(RulesTime(object.timeCreated))
        case "updated": return .timestamp(RulesTime(object.updated))
        case "generation": return .int(object.generation)
        case "metageneration": return .int(object.metageneration)
        case "etag": return .string(object.etag)
        case "metadata": return .map(object.metadata.mapValues(RulesValue.string))
        default: return nil
        }
    }

    var count: Int { Self.keys.count }
    var materialized: [String: RulesValue] { materialize(Self.keys) }
}

/// `request` in storage rules: `auth`, `method`, `params` (none), `path`, `resource`, `time`.
final class LazyStorageRequest: LazyMap, @unchecked Sendable {
    let request: StorageRulesRequest
    private(set) var timeRead = false

    init(_ request: StorageRulesRequest) { self.request = request }

    static let keys = ["auth", "method", "params", "path", "resource", "time"]

    subscript(key: String) -> RulesValue? {
        switch key {
        case "auth": return request.auth.map { .lazy(LazyAuth($0)) } ?? .null
        case "method": return .string(request.method.rawValue)
        case "params": return .map([:])
        case "path": return .path(request.rulesPath)
        case "resource": return request.requestResource.map { .lazy(LazyStorageObject($0)) } ?? .null
        case "time":
            timeRead = true
            return .timestamp(RulesTime(request.time))
        default: return nil
        }
    }

    var count: Int { Self.keys.count }
    var materialized: [String: RulesValue] { materialize(Self.keys) }
}
