import HearthTesting
import Testing
import HearthCore

/// Properties of the existing Core: lossless wire JSON and a total order.
@Suite("Values")
struct ValueTests {
    @Test func wireRoundTripIsLossless() throws {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<5_000 {
            let v = r.value()
            let text = v.wireText
            let back: Value
            do { back = try Value(wireText: text) } catch {
                Issue.record("seed \(seed): \(text) did not parse back: \(error)")
                return
            }
            // Identity equality: ints stay ints, doubles keep their bits (-0.0 included), NaN stays NaN.
            guard back == v else {
                Issue.record("seed \(seed): \(text) came back as \(back.wireText)")
                return
            }
            guard back.wireText == text else {
                Issue.record("seed \(seed): \(text) re-encodes as \(back.wireText)")
                return
            }
        }
    }

    @Test func specialDoublesRoundTrip() throws {
        for d in RandomValues.edgeDoubles {
            let back = try Value(wireText: Value.double(d).wireText)
            #expect(back == .double(d), "\(d) → \(Value.double(d).wireText) → \(back.wireText)")
        }
        for i in RandomValues.edgeInts {
            #expect(try Value(wireText: Value.int(i).wireText) == .int(i))
        }
    }

    @Test func orderIsAntisymmetricAndReflexive() {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<10_000 {
            let a = r.value(), b = r.chance(0.5) ? r.value() : r.smallValue()
            guard Value.compare(a, a) == 0, Value.compare(a, b) == -Value.compare(b, a) else {
                Issue.record("seed \(seed): order not antisymmetric for \(a.wireText), \(b.wireText)")
                return
            }
            if a == b && Value.compare(a, b) != 0 {
                Issue.record("seed \(seed): identical values \(a.wireText) compare unequal")
                return
            }
        }
    }

    @Test func orderIsTransitive() {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<10_000 {
            // Small values collide often, so ties and chains are exercised.
            let xs = [r.smallValue(), r.smallValue(), r.chance(0.5) ? r.value() : r.smallValue()]
            for (i, j, k) in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)] {
                let (a, b, c) = (xs[i], xs[j], xs[k])
                let ab = Value.compare(a, b), bc = Value.compare(b, c), ac = Value.compare(a, c)
                if (ab <= 0 && bc <= 0 && ac > 0) || (ab == 0 && bc == 0 && ac != 0) || (ab < 0 && bc < 0 && ac >= 0) {
                    Issue.record("seed \(seed): order not transitive over \(a.wireText), \(b.wireText), \(c.wireText)")
                    return
                }
            }
        }
    }

    @Test func orderMatchesSortingAPermutation() {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        var values = (0..<300).map { _ in r.chance(0.5) ? r.value() : r.smallValue() }
        values.sort { Value.compare($0, $1) < 0 }
        for (a, b) in zip(values, values.dropFirst()) where Value.compare(a, b) > 0 {
            Issue.record("seed \(seed): sorted values out of order: \(a.wireText) > \(b.wireText)")
            return
        }
    }
}
