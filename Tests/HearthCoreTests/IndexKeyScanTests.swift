import HearthTesting
import Testing
import HearthCore

/// The parts of `IndexKey` the field index's scans rely on: path segment keys decode back and order paths
/// segment by segment, prefixes bound a subtree, and a type class's key range holds exactly that class.
@Suite("Index key scans")
struct IndexKeyScanTests {
    @Test func segmentKeysRoundTripAndOrder() {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<2_000 {
            let a = r.path(), b = r.path()
            let ka = IndexKey.encode(segments: a.segments), kb = IndexKey.encode(segments: b.segments)
            #expect(IndexKey.decodeSegments(ka) == a.segments, "seed \(seed): \(a)")
            #expect(QT.memcmp(ka, kb) == a.compare(b), "seed \(seed): \(a) vs \(b)")
            // Every path strictly below `a` lies in (prefix + 00 00, prefix + FF); `a` itself and others do not.
            let prefix = IndexKey.prefix(segments: a.segments)
            let below = b.segments.count > a.segments.count && b.segments.starts(with: a.segments)
            let inside = QT.memcmp(kb, prefix + [0x00, 0x00]) > 0 && QT.memcmp(kb, prefix + [0xFF]) < 0
            #expect(below == inside, "seed \(seed): \(b) under \(a)")
        }
        #expect(IndexKey.decodeSegments([0x61]) == nil)
        #expect(IndexKey.decodeSegments([0x61, 0x00, 0x01, 0x00, 0x00, 0x00]) == nil)
        #expect(IndexKey.decodeSegments([0x61, 0x00, 0xFF, 0x00, 0x01, 0x00, 0x00]) == ["a\u{0}"])
    }

    @Test func rangeClassHoldsItsTypeOnly() {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<5_000 {
            let operand = r.value(), v = r.value()
            let (lower, upper) = IndexKey.rangeClass(of: operand)
            let key = IndexKey.encode(v)
            let inside = QT.memcmp(key, lower) >= 0 && QT.memcmp(key, upper) < 0
            #expect(inside == (v.typeOrder == operand.typeOrder && !v.isNaN),
                    "seed \(seed): \(v.wireText) against the class of \(operand.wireText)")
        }
    }
}
