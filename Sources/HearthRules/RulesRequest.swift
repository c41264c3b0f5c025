import HearthCore

/// The operation a request performs, as rules see it in `request.method`.
public enum RulesMethod: String, Sendable, CaseIterable {
    case get, list, create, update, delete
}

/// The signed-in caller as rules see it in `request.auth`.
public struct RulesAuth: Sendable, Hashable {
    /// The user's id, `request.auth.uid`.
    public var uid: String
    /// The token claims, `request.auth.token`.
    public var token: [String: Value]

    /// Makes an auth context.
    public init(uid: String, token: [String: Value] = [:]) {
        self.uid = uid
        self.token = token
    }

    /// The same uid bytes (see `sameUTF8`) and equal claims.
    public static func == (a: RulesAuth, b: RulesAuth) -> Bool { sameUTF8(a.uid, b.uid) && a.token == b.token }

    public func hash(into hasher: inout Hasher) {
        hashUTF8(uid, into: &hasher)
        hasher.combine(token)
    }
}

/// What a `list` (query, listener, aggregate) asks for, so rules can be checked against every document
/// the query could return.
public struct ListConstraints: Sendable, Equatable {
    /// Which documents the query ranges over.
    public enum Target: Sendable, Equatable {
        /// One collection.
        case collection(CollectionPath)
        /// Every collection with this id, optionally only below one document.
        case collectionGroup(id: String, under: DocumentPath?)
    }

    /// One `orderBy` clause.
    public struct Order: Sendable, Equatable {
        /// The ordered field.
        public var field: FieldPath
        /// True for descending order.
        public var descending: Bool

        /// Makes an order clause.
        public init(field: FieldPath, descending: Bool = false) {
            self.field = field
            self.descending = descending
        }
    }

    /// Which documents the query ranges over.
    public var target: Target
    /// The query's limit, `request.query.limit`.
    public var limit: Int?
    /// The query's offset, `request.query.offset`.
    public var offset: Int?
    /// The query's order, `request.query.orderBy` (a map of field to `ASC`/`DESC`).
    public var orderBy: [Order]
    /// The query's filter in disjunctive form: each disjunct maps a field path to the value its `==` pins.
    /// An empty list means no filter (one disjunct pinning nothing).
    public var disjuncts: [[FieldPath: Value]]

    /// Makes list constraints.
    public init(target: Target, limit: Int? = nil, offset: Int? = nil, orderBy: [Order] = [],
                disjuncts: [[FieldPath: Value]] = []) {
        self.target = target
        self.limit = limit
        self.offset = offset
        self.orderBy = orderBy
        self.disjuncts = disjuncts
    }
}

/// A document's path and its fields as canonical wire JSON (an object), as the store keeps them.
public struct StoredFields: Sendable {
    public var path: DocumentPath
    public var data: [UInt8]

    public init(path: DocumentPath, data: [UInt8]) {
        self.path = path
        self.data = data
    }
}

/// One request to authorize.
public struct RulesRequest: Sendable {
    /// The operation.
    public var method: RulesMethod
    /// The document; for `list` without `query`, a path whose last segment is a placeholder for the unknown id.
    public var path: DocumentPath
    /// The caller; nil when unauthenticated.
    public var auth: RulesAuth?
    /// `request.time`; also the value of server timestamps in `request.resource`.
    public var time: Timestamp
    /// The stored document (`resource`), for get, update and delete; nil when it does not exist.
    public var resource: Document?
    /// The stored document still in its stored JSON, in place of `resource`: its fields are decoded only
    /// as far as the rules read them.
    public var storedResource: StoredFields?
    /// The document after the write (`request.resource`), for create and update.
    public var requestResource: Document?
    /// The query, for `list`.
    public var query: ListConstraints?
    /// How many distinct `get`/`exists` documents this request may read (10 alone, 20 in a batch).
    public var accessCallLimit: Int

    /// Makes a request.
    public init(method: RulesMethod, path: DocumentPath, auth: RulesAuth? = nil, time: Timestamp,
                resource: Document? = nil, requestResource: Document? = nil, query: ListConstraints? = nil,
                accessCallLimit: Int = RulesLimits.maxAccessCallsSingle) {
        self.method = method
        self.path = path
        self.auth = auth
        self.time = time
        self.resource = resource
        self.requestResource = requestResource
        self.query = query
        self.accessCallLimit = accessCallLimit
    }
}

/// Reads documents for `get`/`exists` (stored state) and `getAfter`/`existsAfter` (state after the
/// pending writes). Synchronous: the engine calls evaluation on a storage thread.
public protocol RulesDocumentLookup: Sendable {
    /// The stored document, or nil when it does not exist.
    func get(_ path: DocumentPath) throws -> Document?
    /// The document as it would be after the pending writes, or nil when it would not exist.
    func getAfter(_ path: DocumentPath) throws -> Document?
}

/// A lookup with no documents, for requests whose rules read nothing.
public struct EmptyDocumentLookup: RulesDocumentLookup {
    /// Makes the empty lookup.
    public init() {}
    /// Always nil.
    public func get(_ path: DocumentPath) throws -> Document? { nil }
    /// Always nil.
    public func getAfter(_ path: DocumentPath) throws -> Document? { nil }
}

/// Why a request was denied: the deciding rule and expression, or that no rule matched.
public struct RulesDenial: Sendable, Equatable, CustomStringConvertible {
    /// `file:line:column` of the deciding `allow`, or nil when no `allow` matched the request.
    public var location: String?
    /// The deciding condition as written, or nil when no `allow` matched.
    public var expression: String?
    /// What the condition came to: `false`, an evaluation error, or a value the query leaves unknown.
    public var reason: String

    /// Makes a denial.
    public init(location: String?, expression: String?, reason: String) {
        self.location = location
        self.expression = expression
        self.reason = reason
    }

    /// A denial for a request no `allow` statement matched.
    public static let noRuleMatched = RulesDenial(location: nil, expression: nil, reason: "no rule matched")

    public var description: String {
        guard let location, let expression else { return reason }
        return "\(location): allow denied by `\(expression)`: \(reason)"
    }
}

/// The outcome of evaluating rules for one request.
public enum RulesDecision: Sendable, Equatable {
    case allow
    case deny(RulesDenial)

    /// True for `.allow`.
    public var isAllowed: Bool {
        if case .allow = self { return true }
        return false
    }
}
