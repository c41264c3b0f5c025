import HearthCore

/// Random values, documents and queries for property and differential tests, biased towards the edge cases
/// that break orderings and encodings (NaN, ±0, ±Infinity, int64 edges, 2^53 neighbours, NUL bytes,
/// non-ASCII text, nested arrays and maps) and towards small vocabularies so that filters actually match.
public struct RandomValues {
    /// The generator every draw comes from.
    public var rng: SeededGenerator
    /// Deepest nesting of arrays and maps generated.
    public var maxDepth: Int

    /// Makes a source of random values from a seed.
    public init(seed: UInt64, maxDepth: Int = 3) {
        rng = SeededGenerator(seed: seed)
        self.maxDepth = maxDepth
    }

    /// A uniform integer in a range.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    /// True with the given probability.
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// Doubles that break naive orderings.
    public static let edgeDoubles: [Double] = [
        .nan, -.nan, .infinity, -.infinity, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, .leastNonzeroMagnitude,
        -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        9_007_199_254_740_992.0, 9_007_199_254_740_994.0, -9_007_199_254_740_992.0, 9_223_372_036_854_775_808.0,
        -9_223_372_036_854_775_808.0, 9_223_372_036_854_774_784.0, 1e300, 3.0, 2.5,
    ]

    /// Integers that break naive orderings.
    public static let edgeInts: [Int64] = [
        0, 1, -1, 2, 3, .max, .min, .max - 1, .min + 1, 9_007_199_254_740_991, 9_007_199_254_740_992,
        9_007_199_254_740_993, -9_007_199_254_740_993, 1 << 62, -(1 << 62),
    ]

    /// Strings that break naive orderings: empty, NUL bytes, prefixes, non-ASCII, astral characters.
    public static let edgeStrings: [String] = [
        "", "a", "a\u{0}", "a\u{0}b", "\u{0}", "ab", "b", "A", "é", "e\u{301}", "日本", "😀", "\u{7F}", "\u{80}",
        "\u{FFFF}", "a\u{1}",
    ]

    /// A random number (int or double), often an edge case.
    public mutating func number() -> Value {
        switch int(0...5) {
        case 0: return .int(pick(Self.edgeInts))
        case 1: return .double(pick(Self.edgeDoubles))
        case 2: return .int(Int64(int(-5...5)))
        case 3: return .double(Double(int(-10...10)) / 2)
        case 4: return .int(Int64.random(in: .min ... .max, using: &rng))
        default:
            // Doubles with random bit patterns cover subnormals and every exponent.
            return .double(Double(bitPattern: rng.next()))
        }
    }

    /// A random string, often an edge case, sometimes long.
    public mutating func string() -> String {
        switch int(0...3) {
        case 0: return pick(Self.edgeStrings)
        case 1: return String(repeating: pick(["a", "b", "\u{0}", "é"]), count: int(1...40))
        default:
            let alphabet: [Character] = ["a", "b", "c", "\u{0}", "é", "z", "😀", "A", "~"]
            return String((0..<int(0...6)).map { _ in pick(alphabet) })
        }
    }

    /// A random document path with 1 to 3 levels of collections. Ids with U+0001 sort below `/` byte-wise, which
    /// segment-by-segment order must not be fooled by (ids may not hold U+0000).
    public mutating func path() -> DocumentPath {
        var segments: [String] = []
        for _ in 0..<int(1...3) {
            segments.append(pick(["users", "posts", "c", "c\u{1}", "cé"]))
            segments.append(pick(["a", "b", "a\u{1}", "ab", "z", "é", "1"]))
        }
        return DocumentPath(uncheckedSegments: segments)
    }

    /// A random value of any type, nested up to `maxDepth`.
    public mutating func value(depth: Int = 0) -> Value {
        let nested = depth < maxDepth
        switch int(0...(nested ? 11 : 9)) {
        case 0: return .null
        case 1: return .bool(chance(0.5))
        case 2, 3: return number()
        case 4:
            let micros = chance(0.3) ? pick([Timestamp.min.microseconds, Timestamp.max.microseconds, 0, -1, 1])
                : Int64.random(in: Timestamp.min.microseconds...Timestamp.max.microseconds, using: &rng)
            return .timestamp(Timestamp(microseconds: micros))
        case 5, 6: return .string(string())
        case 7: return .bytes((0..<int(0...5)).map { _ in pick([0x00, 0x01, 0xFF, 0x7F, UInt8.random(in: 0...255, using: &rng)]) })
        case 8: return .reference(path())
        case 9:
            let lat = chance(0.3) ? pick([-90.0, 0.0, -0.0, 90.0]) : Double.random(in: -90...90, using: &rng)
            let lng = chance(0.3) ? pick([-180.0, 0.0, -0.0, 180.0]) : Double.random(in: -180...180, using: &rng)
            return .geoPoint(GeoPoint(latitude: lat, longitude: lng))
        case 10: return .array((0..<int(0...3)).map { _ in value(depth: depth + 1) })
        default:
            var m: [String: Value] = [:]
            for _ in 0..<int(0...3) { m[pick(["a", "b", "ab", "\u{0}", "é", "$x", "z"])] = value(depth: depth + 1) }
            return .map(m)
        }
    }

    /// A value from a small pool, so that equality filters and cursors hit stored documents.
    public mutating func smallValue() -> Value {
        switch int(0...9) {
        case 0: return .null
        case 1: return .bool(chance(0.5))
        case 2: return .int(Int64(int(-2...3)))
        case 3: return .double(pick([1.0, 2.5, -0.0, .nan, -1.0, .infinity]))
        case 4: return .string(pick(["a", "b", "ab", ""]))
        case 5: return .timestamp(Timestamp(microseconds: Int64(int(0...3)) * 1_000_000))
        case 6: return .array((0..<int(0...2)).map { _ in .int(Int64(int(0...2))) })
        case 7: return .map(["k": .int(Int64(int(0...1)))])
        case 8: return .reference(DocumentPath(uncheckedSegments: ["users", pick(["a", "b"])]))
        default: return .string(pick(["x", "y"]))
        }
    }

    /// Field names the document and query generators share.
    public static let fieldNames = ["a", "b", "c", "tags", "m"]

    /// A random document in one of the given collections, with fields from a small vocabulary.
    public mutating func document(in collections: [CollectionPath], id: String) -> Document {
        var fields: [String: Value] = [:]
        for name in Self.fieldNames where chance(0.7) {
            switch name {
            case "tags": fields[name] = .array((0..<int(0...3)).map { _ in smallValue() })
            case "m": fields[name] = .map(["x": smallValue()])
            default: fields[name] = smallValue()
            }
        }
        let parent = pick(collections)
        let t = Timestamp(microseconds: 1_000_000)
        return Document(path: DocumentPath(uncheckedSegments: parent.segments + [id]), fields: fields, createTime: t, updateTime: t)
    }

    /// A random field path from the shared vocabulary, sometimes nested or `__name__`.
    public mutating func fieldPath() -> FieldPath {
        switch int(0...9) {
        case 0: return .documentName
        case 1: return FieldPath(uncheckedSegments: ["m", "x"])
        default: return FieldPath(uncheckedSegments: [pick(["a", "b", "c", "tags"])])
        }
    }

    /// A random field filter (it may be invalid; `query(over:)` retries until the query validates).
    public mutating func fieldFilter() -> FieldFilter {
        let field = fieldPath()
        let op = pick(FilterOperator.allCases)
        func one(_ me: inout RandomValues) -> Value {
            field.isDocumentName ? .reference(DocumentPath(uncheckedSegments: ["users", me.pick(["a", "b", "c"])])) : me.smallValue()
        }
        if op.takesList {
            return FieldFilter(field: field, op: op, value: .array((0..<int(1...3)).map { _ in one(&self) }))
        }
        return FieldFilter(field: field, op: op, value: one(&self))
    }

    /// A random filter tree of up to the given depth.
    public mutating func filter(depth: Int = 2) -> Filter {
        if depth == 0 || chance(0.5) { return .field(fieldFilter()) }
        let items = (0..<int(1...3)).map { _ in filter(depth: depth - 1) }
        return chance(0.5) ? .and(items) : .or(items)
    }

    /// A random valid query over the collection, with filters, orderings, cursors, limits and projections.
    public mutating func query(over collection: CollectionPath) -> Query {
        while true {
            var q = Query(source: chance(0.8) ? .collection(collection) : .collectionGroup(id: collection.id, under: nil))
            if chance(0.8) { q.filter = filter() }
            for _ in 0..<int(0...2) {
                let field = fieldPath()
                if !q.orderBy.contains(where: { $0.field == field }) {
                    q.orderBy.append(Query.Order(field, chance(0.5) ? .ascending : .descending))
                }
            }
            let order = q.normalizedOrder
            func cursorValues(_ me: inout RandomValues) -> [Value] {
                (0..<me.int(1...order.count)).map { k in
                    order[k].field.isDocumentName
                        ? .reference(DocumentPath(uncheckedSegments: collection.segments + [me.pick(["a", "b", "c"])]))
                        : me.smallValue()
                }
            }
            if chance(0.3) { q.start = Query.Cursor(.values(cursorValues(&self)), inclusive: chance(0.5)) }
            if chance(0.3) { q.end = Query.Cursor(.values(cursorValues(&self)), inclusive: chance(0.5)) }
            if chance(0.3) { q.offset = int(0...3) }
            if chance(0.4) {
                if !q.orderBy.isEmpty && chance(0.3) { q.limitToLast = int(1...5) } else { q.limit = int(1...5) }
            }
            if chance(0.2) { q.select = [fieldPath()] }
            if (try? q.validate()) != nil { return q }
        }
    }
}
