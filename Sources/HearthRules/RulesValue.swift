import HearthCore

/// A value inside rules evaluation: Firestore's document values plus the types only rules have
/// (path, duration, set, map diff) and `unknown`, which stands for a value a query does not pin down.
enum RulesValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case timestamp(RulesTime)
    case duration(RulesDuration)
    /// Path segments; absolute paths start with `databases`.
    case path([String])
    case latlng(Double, Double)
    case list([RulesValue])
    case map([String: RulesValue])
    case set(RulesSet)
    case mapDiff(RulesMapDiff)
    /// A map whose listed keys are known and whose other keys are unknown (a queried document's data).
    case partialMap([String: RulesValue])
    /// A value that depends on which document a query returns.
    case unknown
    /// A map still in its stored form (a document, its data, `request`), converted only as far as an
    /// expression reads it. The evaluator hands it out only where a map is read by key or compared with
    /// a non-map; everywhere else it becomes `.map` first (`materialized`), so built-ins never see it.
    case lazy(any LazyMap)

    /// The type name used in messages and by `is`.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .float: return "float"
        case .string: return "string"
        case .bytes: return "bytes"
        case .timestamp: return "timestamp"
        case .duration: return "duration"
        case .path: return "path"
        case .latlng: return "latlng"
        case .list: return "list"
        case .map, .partialMap, .lazy: return "map"
        case .set: return "set"
        case .mapDiff: return "map_diff"
        case .unknown: return "unknown"
        }
    }

    /// Converts a stored document value; references become absolute paths in the default database.
    init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .float(d)
        case .timestamp(let t): self = .timestamp(RulesTime(t))
        case .string(let s): self = .string(s)
        case .bytes(let b): self = .bytes(b)
        case .reference(let p): self = .path(RulesValue.documentsPrefix + p.segments)
        case .geoPoint(let g): self = .latlng(g.latitude, g.longitude)
        case .array(let items): self = .list(items.map(RulesValue.init))
        case .map(let m): self = .map(m.mapValues(RulesValue.init))
        }
    }

    /// Converts a stored document value, leaving a map in its stored form until it is read.
    static func lazily(_ value: Value) -> RulesValue {
        if case .map(let m) = value { return .lazy(LazyFields(m)) }
        return RulesValue(value)
    }

    /// `databases/(default)/documents`: the prefix of every absolute document path in rules.
    static let documentsPrefix = ["databases", RulesLimits.databaseID, "documents"]

    /// `path(string)`: the pieces between slashes after one leading slash, empty ones kept, so that
    /// `'a//b'` or `'a/b/'` names no document instead of passing for `a/b`.
    static func pathSegments(_ text: String) -> [String] {
        let body = text.hasPrefix("/") ? text.dropFirst() : Substring(text)
        return body.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// The value as a resource map: `data`, `id`, `__name__`.
    static func resource(_ doc: Document) -> RulesValue {
        .map([
            "data": .map(doc.fields.mapValues(RulesValue.init)),
            "id": .string(doc.path.id),
            "__name__": .path(documentsPrefix + doc.path.segments),
        ])
    }

    /// The value with any lazy map at its top converted; nested values of a lazy map are converted eagerly.
    var materialized: RulesValue {
        if case .lazy(let m) = self { return .map(m.materialized) }
        return self
    }

    var isUnknown: Bool {
        if case .unknown = self { return true }
        return false
    }

    /// True when every pair is equal, false when one is not, nil when none differs but some depend on an unknown.
    private static func allEqual(_ pairs: some Sequence<(RulesValue, RulesValue)>) -> Bool? {
        var unknown = false
        for (u, v) in pairs {
            switch equal(u, v) {
            case false?: return false
            case nil: unknown = true
            default: break
            }
        }
        return unknown ? nil : true
    }

    /// Rules equality: numbers by value across int and float, containers element-wise, different types unequal.
    /// Returns nil when the answer depends on an unknown.
    static func equal(_ a: RulesValue, _ b: RulesValue) -> Bool? {
        switch (a, b) {
        case (.lazy, .lazy), (.lazy, .map), (.map, .lazy): return equal(a.materialized, b.materialized)
        // Against anything but a map only the type matters: `resource != null` converts nothing.
        case (.lazy, _): return equal(.map([:]), b)
        case (_, .lazy): return equal(a, .map([:]))
        case (.unknown, _), (_, .unknown), (.partialMap, _), (_, .partialMap): return nil
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y
        case (.int(let x), .float(let y)), (.float(let y), .int(let x)): return Value.compareIntDouble(x, y) == 0 && !y.isNaN
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.duration(let x), .duration(let y)): return x == y
        case (.path(let x), .path(let y)): return sameSegments(x, y)
        case (.latlng(let a1, let o1), .latlng(let a2, let o2)): return a1 == a2 && o1 == o2
        case (.list(let x), .list(let y)):
            guard x.count == y.count else { return false }
            return allEqual(zip(x, y))
        case (.map(let x), .map(let y)):
            guard x.count == y.count, x.keys.allSatisfy({ y[$0] != nil }) else { return false }
            return allEqual(x.lazy.map { ($0.value, y[$0.key]!) })
        case (.set(let x), .set(let y)):
            return x.count == y.count && x.elements.allSatisfy { y.contains($0) }
        case (.mapDiff(let x), .mapDiff(let y)):
            return equal(.map(x.left), .map(y.left)) == true && equal(.map(x.right), .map(y.right)) == true
        default: return false
        }
    }

    /// A short rendering for messages and `debug()`.
    var debugDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let d): return RulesValue.formatFloat(d)
        case .string(let s): return quote(s)
        case .bytes(let b): return "b'" + b.map { "\\x" + hex2($0) }.joined() + "'"
        case .timestamp(let t): return "timestamp(\(t.rfc3339))"
        case .duration(let d): return "duration(\(d.seconds)s, \(d.nanos)ns)"
        case .path(let p): return "/" + p.joined(separator: "/")
        case .latlng(let a, let o): return "latlng(\(a), \(o))"
        case .list(let items): return "[" + items.map(\.debugDescription).joined(separator: ", ") + "]"
        case .map(let m):
            return "{" + m.keys.sorted(by: utf8Less).map { quote($0) + ": " + m[$0]!.debugDescription }.joined(separator: ", ") + "}"
        case .lazy(let m): return RulesValue.map(m.materialized).debugDescription
        case .partialMap: return "{...}"
        case .set(let s): return "set(" + s.elements.map(\.debugDescription).joined(separator: ", ") + ")"
        case .mapDiff: return "map_diff"
        case .unknown: return "unknown"
        }
    }

    static func formatFloat(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return String(d)
    }
}

func quote(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 { out += "\\x" + hex2(UInt8(scalar.value)) } else { out.unicodeScalars.append(scalar) }
        }
    }
    return out + "\""
}

func hex2(_ b: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
}

/// Hashes and compares values by rules equality, so sets treat `1` and `1.0` as one element.
struct RulesKey: Hashable, Sendable {
    let value: RulesValue

    static func == (a: RulesKey, b: RulesKey) -> Bool { RulesValue.equal(a.value, b.value) == true }

    func hash(into hasher: inout Hasher) {
        switch value {
        case .int(let i): hasher.combine(Double(i))
        case .float(let d): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .bool(let b): hasher.combine(b)
        case .path(let p): hasher.combine(p)
        case .bytes(let b): hasher.combine(b)
        case .list(let items): hasher.combine(items.count)
        case .map(let m): hasher.combine(m.count)
        case .lazy(let m): hasher.combine(m.count)
        default: hasher.combine(value.typeName)
        }
    }
}

/// A rules set: unique elements by rules equality, in first-seen order.
struct RulesSet: Sendable {
    let elements: [RulesValue]
    /// The elements hashed, or nil for a small set, which is searched element by element (the same
    /// equality, without hashing).
    private let keys: Set<RulesKey>?

    /// Sets up to this size are not hashed.
    private static let linearLimit = 8

    init(_ values: [RulesValue]) {
        if values.count <= Self.linearLimit {
            var unique: [RulesValue] = []
            unique.reserveCapacity(values.count)
            for v in values where !unique.contains(where: { RulesValue.equal($0, v) == true }) { unique.append(v) }
            elements = unique
            keys = nil
            return
        }
        var seen = Set<RulesKey>()
        var unique: [RulesValue] = []
        for v in values where seen.insert(RulesKey(value: v)).inserted { unique.append(v) }
        elements = unique
        keys = seen
    }

    var count: Int { elements.count }

    func contains(_ v: RulesValue) -> Bool {
        if let keys { return keys.contains(RulesKey(value: v)) }
        return elements.contains { RulesValue.equal($0, v) == true }
    }
}

/// The difference between two maps (`a.diff(b)`): `left` is `a`, `right` is `b`.
struct RulesMapDiff: Sendable {
    let left: [String: RulesValue]
    let right: [String: RulesValue]

    /// Keys in `left` and not in `right`.
    var addedKeys: RulesSet { RulesSet(left.keys.filter { right[$0] == nil }.sorted(by: utf8Less).map { .string($0) }) }
    /// Keys in `right` and not in `left`.
    var removedKeys: RulesSet { RulesSet(right.keys.filter { left[$0] == nil }.sorted(by: utf8Less).map { .string($0) }) }
    /// Keys in both whose values differ.
    var changedKeys: RulesSet {
        RulesSet(left.keys.filter { k in right[k].map { RulesValue.equal(left[k]!, $0) != true } ?? false }
            .sorted(by: utf8Less).map { .string($0) })
    }
    /// Keys in both whose values are equal.
    var unchangedKeys: RulesSet {
        RulesSet(left.keys.filter { k in right[k].map { RulesValue.equal(left[k]!, $0) == true } ?? false }
            .sorted(by: utf8Less).map { .string($0) })
    }
    /// Added, removed and changed keys together.
    var affectedKeys: RulesSet {
        var keys = left.keys.filter { k in right[k].map { RulesValue.equal(left[k]!, $0) != true } ?? true }
        keys.sort(by: utf8Less)
        let removed = right.keys.filter { left[$0] == nil }.sorted(by: utf8Less)
        // Added and changed keys come first, each group sorted, as the union of the three sets has them.
        var added: [String] = [], changed: [String] = []
        for k in keys { if right[k] == nil { added.append(k) } else { changed.append(k) } }
        return RulesSet((added + removed + changed).map { .string($0) })
    }
}
