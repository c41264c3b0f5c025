import HearthTesting
import Testing
import HearthCore

/// Property tests: memcmp order of index keys is `Value.compare`'s order, for every pair of values.
@Suite("Index keys")
struct QueryIndexKeyTests {
    static let pairsPerRun = 20_000

    func check(_ a: Value, _ b: Value, seed: UInt64, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let expected = Value.compare(a, b)
        let ka = IndexKey.encode(a), kb = IndexKey.encode(b)
        let got = QT.memcmp(ka, kb)
        guard got == expected else {
            Issue.record("seed \(seed): memcmp order \(got) but Value.compare \(expected) for \(a.wireText) vs \(b.wireText)",
                         sourceLocation: sourceLocation)
            return false
        }
        if expected == 0 && ka != kb {
            Issue.record("seed \(seed): equal values \(a.wireText) and \(b.wireText) have different keys", sourceLocation: sourceLocation)
            return false
        }
        let da = IndexKey.encodeDescending(a), db = IndexKey.encodeDescending(b)
        guard QT.memcmp(da, db) == -expected else {
            Issue.record("seed \(seed): descending keys do not reverse \(a.wireText) vs \(b.wireText)", sourceLocation: sourceLocation)
            return false
        }
        // Keys concatenate: a composite (value, value) key orders by the first value, then the second.
        let ca = ka + IndexKey.encode(b), cb = kb + IndexKey.encode(a)
        let composite = expected != 0 ? expected : Value.compare(b, a)
        guard QT.memcmp(ca, cb) == composite else {
            Issue.record("seed \(seed): composite keys misorder \(a.wireText), \(b.wireText)", sourceLocation: sourceLocation)
            return false
        }
        return true
    }

    @Test func randomPairs() {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<Self.pairsPerRun {
            let a = r.value(), b = r.chance(0.3) ? r.value() : mutate(a, &r)
            if !check(a, b, seed: seed) { return }
        }
    }

    /// A value near `a`, so that pairs often share type and prefix (where encodings go wrong).
    func mutate(_ a: Value, _ r: inout RandomValues) -> Value {
        switch a {
        case .int, .double: return r.number()
        case .string(let s): return .string(r.chance(0.5) ? s + r.string() : String(s.dropLast()))
        case .array(let items):
            if items.isEmpty || r.chance(0.3) { return .array(items + [r.value(depth: 2)]) }
            var copy = items
            copy[r.int(0...(items.count - 1))] = r.chance(0.5) ? r.value(depth: 2) : mutate(copy[0], &r)
            return .array(r.chance(0.3) ? Array(copy.dropLast()) : copy)
        case .map(var m):
            m[r.pick(["a", "b", "ab", "\u{0}", "é"])] = r.chance(0.5) ? r.value(depth: 2) : nil
            return .map(m)
        case .reference: return .reference(r.path())
        default: return r.value()
        }
    }

    @Test func numberEdges() {
        var numbers: [Value] = RandomValues.edgeDoubles.map { .double($0) } + RandomValues.edgeInts.map { .int($0) }
        for i in RandomValues.edgeInts {
            numbers.append(.double(Double(i)))
            numbers.append(.int(i &+ 1))
            numbers.append(.int(i &- 1))
        }
        for d in RandomValues.edgeDoubles where d.isFinite {
            numbers.append(.double(d.nextUp))
            numbers.append(.double(d.nextDown))
        }
        for a in numbers {
            for b in numbers where !check(a, b, seed: 0) { return }
        }
    }

    @Test func equalValuesShareKeys() {
        #expect(IndexKey.encode(.int(1)) == IndexKey.encode(.double(1.0)))
        #expect(IndexKey.encode(.double(0.0)) == IndexKey.encode(.double(-0.0)))
        #expect(IndexKey.encode(.int(0)) == IndexKey.encode(.double(-0.0)))
        #expect(IndexKey.encode(.double(.nan)) == IndexKey.encode(.double(-.nan)))
        #expect(IndexKey.encode(.int(1 << 53)) == IndexKey.encode(.double(9_007_199_254_740_992.0)))
        #expect(IndexKey.encode(.int(.min)) == IndexKey.encode(.double(-9_223_372_036_854_775_808.0)))
        #expect(IndexKey.encode(.array([.int(1), .map(["a": .int(2)])])) == IndexKey.encode(.array([.double(1), .map(["a": .double(2)])])))
        #expect(IndexKey.encode(.geoPoint(GeoPoint(latitude: -0.0, longitude: 0))) == IndexKey.encode(.geoPoint(GeoPoint(latitude: 0, longitude: -0.0))))
    }

    @Test func handPickedOrder() {
        // Ascending in Firestore's order; checks the tricky neighbours directly.
        let ordered: [Value] = [
            .null, .bool(false), .bool(true), .double(.nan), .double(-.infinity), .double(-1e300), .int(.min), .int(-1),
            .double(-.leastNonzeroMagnitude), .int(0), .double(.leastNonzeroMagnitude), .double(0.5), .int(1), .double(1.5),
            .int(9_007_199_254_740_992), .int(9_007_199_254_740_993), .double(9_007_199_254_740_994), .int(.max),
            .double(9_223_372_036_854_775_808), .double(.infinity),
            .timestamp(.min), .timestamp(Timestamp(microseconds: -1)), .timestamp(Timestamp(microseconds: 0)), .timestamp(.max),
            .string(""), .string("\u{0}"), .string("\u{0}\u{0}"), .string("\u{1}"), .string("a"), .string("a\u{0}"), .string("ab"),
            .string("é"), .string("😀"),
            .bytes([]), .bytes([0]), .bytes([0, 0]), .bytes([0, 0xFF]), .bytes([1]), .bytes([0xFF]),
            .reference(DocumentPath(uncheckedSegments: ["a", "b"])), .reference(DocumentPath(uncheckedSegments: ["a", "b", "c", "d"])),
            .reference(DocumentPath(uncheckedSegments: ["a", "b\u{0}"])), .reference(DocumentPath(uncheckedSegments: ["a", "ba"])),
            .reference(DocumentPath(uncheckedSegments: ["a\u{0}", "a"])), .reference(DocumentPath(uncheckedSegments: ["ab", "a"])),
            .geoPoint(GeoPoint(latitude: -90, longitude: 0)), .geoPoint(GeoPoint(latitude: 0, longitude: -180)),
            .geoPoint(GeoPoint(latitude: 0, longitude: 180)),
            .array([]), .array([.null]), .array([.int(1)]), .array([.int(1), .null]), .array([.int(1), .int(2)]),
            .array([.double(1.5)]), .array([.string("a")]), .array([.array([])]),
            .map([:]), .map(["": .null]), .map(["\u{0}": .null]), .map(["a": .null]), .map(["a": .int(1)]),
            .map(["a": .int(1), "b": .null]), .map(["a": .int(2)]), .map(["a\u{0}": .null]), .map(["b": .null]),
        ]
        for (i, a) in ordered.enumerated() {
            for (j, b) in ordered.enumerated() {
                let expected = i == j ? 0 : (i < j ? -1 : 1)
                #expect(Value.compare(a, b) == expected, "Value.compare \(a.wireText) vs \(b.wireText)")
                #expect(QT.memcmp(IndexKey.encode(a), IndexKey.encode(b)) == expected, "keys \(a.wireText) vs \(b.wireText)")
            }
        }
    }

    @Test func documentPathKeys() {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<5_000 {
            let a = r.path(), b = r.path()
            let key = QT.memcmp(IndexKey.encode(path: a), IndexKey.encode(path: b))
            guard key == a.compare(b) else {
                Issue.record("seed \(seed): path keys misorder \(a) vs \(b)")
                return
            }
            var da: [UInt8] = [], db: [UInt8] = []
            IndexKey.append(path: a, descending: true, to: &da)
            IndexKey.append(path: b, descending: true, to: &db)
            guard QT.memcmp(da, db) == -key else {
                Issue.record("seed \(seed): descending path keys misorder \(a) vs \(b)")
                return
            }
        }
    }
}
