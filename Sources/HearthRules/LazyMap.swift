import HearthCore

/// A rules map still in its stored form: `request`, `request.auth`, a document as `resource` or `get()`
/// returns it, or a document's data. Reading one key converts only that key's value, so a rule that
/// reads `resource.data.owner` does not pay for converting the whole document. `materialized` gives the
/// same map as the eager conversion, for everything that needs the whole map.
protocol LazyMap: AnyObject, Sendable {
    /// The value under `key` (nested maps stay lazy), or nil when the map has no such key.
    subscript(key: String) -> RulesValue? { get }
    /// True when the map has `key`, without converting its value.
    func contains(_ key: String) -> Bool
    /// The number of keys.
    var count: Int { get }
    /// The whole map converted, with no lazy map left at any depth.
    var materialized: [String: RulesValue] { get }
}

extension LazyMap {
    func contains(_ key: String) -> Bool { self[key] != nil }

    /// The entries for `keys`, converted all the way down.
    func materialize(_ keys: [String]) -> [String: RulesValue] {
        var out: [String: RulesValue] = [:]
        out.reserveCapacity(keys.count)
        for key in keys { out[key] = self[key]!.materialized }
        return out
    }
}

/// Document data, or a map field inside it.
final class LazyFields: LazyMap {
    let fields: [String: Value]

    init(_ fields: [String: Value]) { self.fields = fields }

    subscript(key: String) -> RulesValue? { fields[key].map(RulesValue.lazily) }
    func contains(_ key: String) -> Bool { fields[key] != nil }
    var count: Int { fields.count }
    var materialized: [String: RulesValue] { fields.mapValues(RulesValue.init) }
}

/// A document as a resource: `data`, `id`, `__name__`.
final class LazyResource: LazyMap {
    let document: Document

    init(_ document: Document) { self.document = document }

    subscript(key: String) -> RulesValue? {
        switch key {
        case "data": return .lazy(LazyFields(document.fields))
        case "id": return .string(document.path.id)
        case "__name__": return .path(RulesValue.documentsPrefix + document.path.segments)
        default: return nil
        }
    }

    var count: Int { 3 }
    var materialized: [String: RulesValue] { materialize(["data", "id", "__name__"]) }
}

/// Document data still in its stored JSON: reading one key finds and decodes only that field. Data that is
/// not a JSON object reads as an empty map.
final class LazyStoredFields: LazyMap, @unchecked Sendable {
    let data: [UInt8]
    /// Every key with its value's range, found when a rule needs all of them.
    private var allMembers: [(key: String, value: Range<Int>)]?

    init(_ data: [UInt8]) { self.data = data }

    private var members: [(key: String, value: Range<Int>)] {
        if let allMembers { return allMembers }
        let found = (try? JSON.objectMembers(data)) ?? []
        allMembers = found
        return found
    }

    subscript(key: String) -> RulesValue? {
        guard let range = allMembers.map({ $0.first { $0.key == key }?.value }) ?? JSON.objectMember(key, in: data),
              let value = try? Value.decodeField(key, data[range]) else { return nil }
        return RulesValue.lazily(value)
    }

    func contains(_ key: String) -> Bool { members.contains { $0.key == key } }
    var count: Int { members.count }
    var materialized: [String: RulesValue] {
        ((try? Value.decodeFields(JSON.parse(data))) ?? [:]).mapValues(RulesValue.init)
    }
}

/// A stored document as a resource, its data decoded field by field as rules read it.
final class LazyStoredResource: LazyMap {
    let path: DocumentPath
    let data: LazyStoredFields

    init(_ stored: StoredFields) {
        path = stored.path
        data = LazyStoredFields(stored.data)
    }

    subscript(key: String) -> RulesValue? {
        switch key {
        case "data": return .lazy(data)
        case "id": return .string(path.id)
        case "__name__": return .path(RulesValue.documentsPrefix + path.segments)
        default: return nil
        }
    }

    var count: Int { 3 }
    var materialized: [String: RulesValue] { materialize(["data", "id", "__name__"]) }
}

/// `request.auth`: `uid`, `token`.
final class LazyAuth: LazyMap {
    let auth: RulesAuth

    init(_ auth: RulesAuth) { self.auth = auth }

    subscript(key: String) -> RulesValue? {
        switch key {
        case "uid": return .string(auth.uid)
        case "token": return .lazy(LazyFields(auth.token))
        default: return nil
        }
    }

    var count: Int { 2 }
    var materialized: [String: RulesValue] { materialize(["uid", "token"]) }
}

/// `request`: `method`, `time`, `auth`, `resource`, `path`, and `query` for a `list`.
/// Read by the one evaluator that made it, on its thread; `timeRead` is that evaluator's record.
final class LazyRequest: LazyMap, @unchecked Sendable {
    let request: RulesRequest
    /// Whether `time` was read (also by materializing the whole map): a decision that read the clock holds
    /// only for its own request.
    private(set) var timeRead = false

    init(_ request: RulesRequest) { self.request = request }

    subscript(key: String) -> RulesValue? {
        switch key {
        case "method": return .string(request.method.rawValue)
        case "time":
            timeRead = true
            return .timestamp(RulesTime(request.time))
        case "auth": return request.auth.map { .lazy(LazyAuth($0)) } ?? .null
        case "resource": return request.requestResource.map { .lazy(LazyResource($0)) } ?? .null
        case "path": return .path(path)
        case "query": return request.method == .list ? query : nil
        default: return nil
        }
    }

    var count: Int { request.method == .list ? 6 : 5 }

    var materialized: [String: RulesValue] {
        materialize(request.method == .list ? ["method", "time", "auth", "resource", "path", "query"]
            : ["method", "time", "auth", "resource", "path"])
    }

    /// `request.path`: the document's path, or for a `list` the collection's.
    private var path: [String] {
        guard request.method == .list else { return RulesValue.documentsPrefix + request.path.segments }
        if let q = request.query, case .collection(let c) = q.target { return RulesValue.documentsPrefix + c.segments }
        return RulesValue.documentsPrefix + request.path.segments.dropLast()
    }

    /// `request.query`: `limit`, `offset` and `orderBy` (field to `ASC`/`DESC`).
    private var query: RulesValue {
        let q = request.query
        var orderBy: [String: RulesValue] = [:]
        for o in q?.orderBy ?? [] { orderBy[o.field.description] = .string(o.descending ? "DESC" : "ASC") }
        return .map([
            "limit": q?.limit.map { .int(Int64($0)) } ?? .null,
            "offset": q?.offset.map { .int(Int64($0)) } ?? .null,
            "orderBy": .map(orderBy),
        ])
    }
}
