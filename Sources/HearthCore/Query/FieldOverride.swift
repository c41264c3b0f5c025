/// A single-field index override: Firestore's `fieldOverrides` entry, which sets the single-field entries one
/// field of a collection group's documents gets, in place of the automatic ones.
///
/// Every field is indexed by default: its value (for `==`, ranges and ordering) and, when it is an array, each
/// distinct element (for `array-contains`). An override with `"indexes": []` exempts the field: no entries,
/// so writes of large text or map fields cost less, and a query that would need them is refused. The field's
/// subfields inherit the override unless one of their own names them. Hearth keeps one value entry for both
/// directions and both query scopes, so any `order` in the override keeps the value entries and any
/// `arrayConfig: CONTAINS` keeps the element entries.
public struct FieldOverride: Sendable, Hashable {
    /// The collection id whose documents it covers (in every collection with that id).
    public var collectionGroup: String
    /// The field, with its subfields.
    public var field: FieldPath
    /// What the field keeps.
    public var indexing: FieldIndexing

    public init(collectionGroup: String, field: FieldPath, indexing: FieldIndexing) {
        self.collectionGroup = collectionGroup
        self.field = field
        self.indexing = indexing
    }

    /// The overrides of an index file's `fieldOverrides` array (missing: none). Every mistake is named with
    /// its place in the file.
    public static func parseFile(_ json: JSON) throws(HearthError) -> [FieldOverride] {
        guard let list = json["fieldOverrides"] else { return [] }
        guard case .array(let items) = list else { throw .invalidArgument("\"fieldOverrides\" must be an array") }
        var out: [FieldOverride] = []
        for (i, item) in items.enumerated() {
            let place = "fieldOverrides[\(i)]"
            let override = try parse(item, at: place)
            if out.contains(where: { $0.collectionGroup == override.collectionGroup && $0.field == override.field }) {
                throw .invalidArgument("\(place): '\(override.field)' of '\(override.collectionGroup)' is overridden twice")
            }
            out.append(override)
        }
        return out
    }

    static func parse(_ json: JSON, at place: String) throws(HearthError) -> FieldOverride {
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must be an object") }
        for (key, _) in pairs where !["collectionGroup", "fieldPath", "indexes", "ttl"].contains(key) {
            throw .invalidArgument("unknown key '\(key.prefix(64))' in \(place) (expected: collectionGroup, fieldPath, indexes, ttl)")
        }
        let group = try CompositeIndex.collectionGroup(json, at: place)
        guard let text = json["fieldPath"]?.stringValue else { throw .invalidArgument("\(place).fieldPath must be a string") }
        let field: FieldPath
        do { field = try FieldPath(parsing: text) } catch { throw .invalidArgument("\(place).fieldPath: \(error.message)") }
        if field.isDocumentName { throw .invalidArgument("\(place): __name__ is always indexed and cannot be overridden") }
        switch json["ttl"] {
        case nil, .bool(false)?: break
        case .bool(true)?:
            throw .invalidArgument("\(place): TTL policies (\"ttl\": true) are not supported; documents are never deleted by age")
        default: throw .invalidArgument("\(place).ttl must be true or false")
        }
        guard case .array(let entries)? = json["indexes"] else {
            throw .invalidArgument("\(place).indexes must be an array (empty to exempt the field from indexing)")
        }
        var indexing = FieldIndexing(values: false, contains: false)
        for (k, entry) in entries.enumerated() {
            let at = "\(place).indexes[\(k)]"
            guard case .object(let keys) = entry else { throw .invalidArgument("\(at) must be an object") }
            for (key, _) in keys where !["order", "arrayConfig", "queryScope"].contains(key) {
                throw .invalidArgument("unknown key '\(key.prefix(64))' in \(at) (expected: order, arrayConfig, queryScope)")
            }
            try CompositeIndex.checkQueryScope(entry, at: at)
            switch try CompositeIndex.kind(entry, at: at) {
            case .ascending, .descending: indexing.values = true
            case .contains: indexing.contains = true
            }
        }
        return FieldOverride(collectionGroup: group, field: field, indexing: indexing)
    }
}

/// Which single-field entries a field gets: its value's, its array elements', both (the default) or none.
public struct FieldIndexing: Sendable, Hashable {
    /// Entries for the field's value: `==`, `!=`, `in`, `not-in`, ranges and ordering.
    public var values: Bool
    /// Entries for each distinct element of an array value: `array-contains` and `array-contains-any`.
    public var contains: Bool

    public init(values: Bool, contains: Bool) {
        self.values = values
        self.contains = contains
    }

    /// Whether these entries serve a filter with this operator (ordering needs the values, as `<` does).
    public func serves(_ op: FilterOperator) -> Bool { Self.needsElements(op) ? contains : values }

    /// Whether a filter with this operator reads the array elements' entries rather than the values'.
    public static func needsElements(_ op: FilterOperator) -> Bool { op == .arrayContains || op == .arrayContainsAny }

    /// Every field's indexing without an override.
    public static let automatic = FieldIndexing(values: true, contains: true)
}

/// The overrides of one collection id, looked up by field: a field's indexing is that of the override naming
/// the field or its nearest parent map, else automatic.
public struct FieldOverrides: Sendable {
    let byField: [FieldPath: FieldIndexing]

    init(_ overrides: [FieldOverride]) {
        byField = Dictionary(overrides.map { ($0.field, $0.indexing) }, uniquingKeysWith: { a, _ in a })
    }

    /// The override naming this very field, if any (subfields start from their parent's indexing).
    public func own(_ field: FieldPath) -> FieldIndexing? { byField[field] }

    /// The indexing of a field: its own override, else its nearest overridden parent's, else automatic.
    public func indexing(of field: FieldPath) -> FieldIndexing {
        var segments = field.segments
        while !segments.isEmpty {
            if let own = byField[FieldPath(uncheckedSegments: segments)] { return own }
            segments.removeLast()
        }
        return .automatic
    }
}
