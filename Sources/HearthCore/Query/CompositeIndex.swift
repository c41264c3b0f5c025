/// A composite index: entries over several fields of a collection group's documents, in the field order
/// and directions it names, so that a query with equality filters on its first fields and its ordering on
/// the rest reads exactly its results in order (docs/api.md, Composite indexes).
///
/// Definitions come in Firestore's `firestore.indexes.json` format (`CompositeIndex.parseFile`), so a
/// project's index file carries over. A document gets entries only when it has every field of the index, as
/// in Firestore; an `arrayConfig: CONTAINS` field gives one entry per distinct element.
public struct CompositeIndex: Sendable, Hashable, CustomStringConvertible {
    /// How one field of the index is kept.
    public enum Kind: String, Sendable, Hashable {
        case ascending = "a"
        case descending = "d"
        /// The array's elements, for `array-contains`.
        case contains = "c"
    }

    /// One field of the index.
    public struct Component: Sendable, Hashable {
        public var field: FieldPath
        public var kind: Kind

        public init(_ field: FieldPath, _ kind: Kind) {
            self.field = field
            self.kind = kind
        }
    }

    /// The collection id the index covers (its collections and its collection group).
    public var collectionGroup: String
    /// The fields, in index order.
    public var fields: [Component]

    public init(collectionGroup: String, fields: [Component]) {
        self.collectionGroup = collectionGroup
        self.fields = fields
    }

    /// The name of the index's entries in the field index: a marker no field path starts with, then the
    /// fields and kinds, e.g. `\u{2}published:a,views:d`.
    public var entryField: String {
        Self.marker + fields.map { "\($0.field.description):\($0.kind.rawValue)" }.joined(separator: ",")
    }

    /// Whether the index's keys are stored with every direction flipped: when its last ordered field is
    /// descending. Within equal keys, entries sort by document name ascending; Firestore orders such an
    /// index's queries by name descending (the last field's direction), so the index is kept the other
    /// way round and read backwards, and its queries stream in order with no sorting.
    public var flipped: Bool { fields.last(where: { $0.kind != .contains })?.kind == .descending }

    /// Whether a field's keys are stored complemented (descending).
    public func storedDescending(_ component: Component) -> Bool {
        component.kind != .contains && ((component.kind == .descending) != flipped)
    }

    /// Marks composite entries in the field index.
    public static let marker = "\u{2}"

    /// The index whose `entryField` this is, for the collection id; nil when the text is not one. Field paths
    /// are canonical, so a `,` or `:` inside a field name is within backticks, where it does not separate.
    public init?(entryField: String, collectionGroup: String) {
        guard entryField.hasPrefix(Self.marker) else { return nil }
        var parts: [String] = [], current = "", quoted = false, escaped = false
        for ch in entryField.dropFirst(Self.marker.count) {
            if escaped { escaped = false } else if quoted && ch == "\\" { escaped = true } else if ch == "`" { quoted.toggle() }
            if ch == "," && !quoted { parts.append(current); current = "" } else { current.append(ch) }
        }
        parts.append(current)
        var fields: [Component] = []
        for part in parts {
            guard let colon = part.lastIndex(of: ":"), let kind = Kind(rawValue: String(part[part.index(after: colon)...])),
                  let field = try? FieldPath(parsing: String(part[..<colon])) else { return nil }
            fields.append(Component(field, kind))
        }
        self.init(collectionGroup: collectionGroup, fields: fields)
    }

    public var description: String {
        "\(collectionGroup) (" + fields.map { "\($0.field) \($0.kind == .ascending ? "asc" : $0.kind == .descending ? "desc" : "contains")" }
            .joined(separator: ", ") + ")"
    }

    /// The definitions of an index file: `{"indexes": [{"collectionGroup", "queryScope", "fields":
    /// [{"fieldPath", "order" | "arrayConfig"}]}], "fieldOverrides": [...]}`. Every mistake is named with its
    /// place in the file. The `fieldOverrides` are `FieldOverride.parseFile`'s.
    public static func parseFile(_ json: JSON) throws(HearthError) -> [CompositeIndex] {
        guard case .object(let top) = json else { throw .invalidArgument("the index file must be a JSON object with an \"indexes\" array") }
        for (key, _) in top where key != "indexes" && key != "fieldOverrides" {
            throw .invalidArgument("unknown key '\(key.prefix(64))' in the index file (expected: indexes, fieldOverrides)")
        }
        guard let list = json["indexes"] else { return [] }
        guard case .array(let items) = list else { throw .invalidArgument("\"indexes\" must be an array") }
        var out: [CompositeIndex] = []
        for (i, item) in items.enumerated() {
            let index = try parse(item, at: "indexes[\(i)]")
            if !out.contains(index) { out.append(index) }
        }
        return out
    }

    static func parse(_ json: JSON, at place: String) throws(HearthError) -> CompositeIndex {
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must be an object") }
        for (key, _) in pairs where !["collectionGroup", "queryScope", "fields", "density"].contains(key) {
            throw .invalidArgument("unknown key '\(key.prefix(64))' in \(place) (expected: collectionGroup, queryScope, fields)")
        }
        let group = try collectionGroup(json, at: place)
        try checkQueryScope(json, at: place)
        guard case .array(let rawFields)? = json["fields"] else { throw .invalidArgument("\(place).fields must be an array") }
        guard rawFields.count >= 2 else {
            throw .invalidArgument("\(place) has \(rawFields.count) field(s); a composite index needs at least 2 (every single field is indexed already)")
        }
        var fields: [Component] = []
        for (k, raw) in rawFields.enumerated() {
            let at = "\(place).fields[\(k)]"
            guard case .object(let entry) = raw else { throw .invalidArgument("\(at) must be an object") }
            for (key, _) in entry where !["fieldPath", "order", "arrayConfig"].contains(key) {
                throw .invalidArgument("unknown key '\(key.prefix(64))' in \(at) (expected: fieldPath, order, arrayConfig)")
            }
            guard let text = raw["fieldPath"]?.stringValue else { throw .invalidArgument("\(at).fieldPath must be a string") }
            let path: FieldPath
            do { path = try FieldPath(parsing: text) } catch { throw .invalidArgument("\(at).fieldPath: \(error.message)") }
            if path.isDocumentName { throw .invalidArgument("\(at): __name__ is ordered implicitly and cannot be a field of the index") }
            let kind = try Self.kind(raw, at: at)
            if fields.contains(where: { $0.field == path }) { throw .invalidArgument("\(at): '\(path)' appears twice in the index") }
            fields.append(Component(path, kind))
        }
        if fields.filter({ $0.kind == .contains }).count > 1 {
            throw .invalidArgument("\(place) has more than one arrayConfig CONTAINS field; an index may have one")
        }
        return CompositeIndex(collectionGroup: group, fields: fields)
    }

    // Parts of an index file's entries that indexes and field overrides share.

    /// The entry's `collectionGroup`: a valid collection id.
    static func collectionGroup(_ json: JSON, at place: String) throws(HearthError) -> String {
        guard let group = json["collectionGroup"]?.stringValue, !group.isEmpty else {
            throw .invalidArgument("\(place).collectionGroup must be a collection id")
        }
        try validateID(group, kind: "\(place).collectionGroup")
        return group
    }

    /// Checks an optional `queryScope`, which Hearth accepts and does not need.
    static func checkQueryScope(_ json: JSON, at place: String) throws(HearthError) {
        if let scope = json["queryScope"] {
            guard let s = scope.stringValue, ["COLLECTION", "COLLECTION_GROUP"].contains(s) else {
                throw .invalidArgument("\(place).queryScope must be COLLECTION or COLLECTION_GROUP")
            }
        }
    }

    /// How a field is kept: exactly one of `"order": ASCENDING | DESCENDING` or `"arrayConfig": CONTAINS`.
    static func kind(_ json: JSON, at place: String) throws(HearthError) -> Kind {
        switch (json["order"]?.stringValue, json["arrayConfig"]?.stringValue, json["order"] != nil, json["arrayConfig"] != nil) {
        case ("ASCENDING"?, nil, _, false): return .ascending
        case ("DESCENDING"?, nil, _, false): return .descending
        case (nil, "CONTAINS"?, false, _): return .contains
        default:
            throw .invalidArgument("\(place) needs exactly one of \"order\": ASCENDING or DESCENDING, or \"arrayConfig\": CONTAINS")
        }
    }
}

/// The index definitions in force, by collection id: the composite indexes and the single-field overrides.
/// Immutable; a class so that a read context holding it stays small enough to pass as a protocol value
/// without a copy on the heap.
public final class CompositeIndexes: Sendable {
    public let all: [CompositeIndex]
    let byCollection: [String: [CompositeIndex]]
    /// Every single-field override.
    public let overrides: [FieldOverride]
    let overridesByCollection: [String: FieldOverrides]

    /// Indexes the definitions by collection id.
    public init(_ indexes: [CompositeIndex] = [], overrides: [FieldOverride] = []) {
        all = indexes
        byCollection = Dictionary(grouping: indexes, by: \.collectionGroup)
        self.overrides = overrides
        overridesByCollection = Dictionary(grouping: overrides, by: \.collectionGroup).mapValues(FieldOverrides.init)
    }

    /// The indexes of a collection id.
    public func of(_ collectionID: String) -> [CompositeIndex] { byCollection[collectionID] ?? [] }

    /// The single-field overrides of a collection id; nil when it has none (every field indexed).
    public func overrides(of collectionID: String) -> FieldOverrides? { overridesByCollection[collectionID] }

    public var isEmpty: Bool { all.isEmpty }
}
