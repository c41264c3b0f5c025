import HearthTesting
import Testing
import HearthCore

/// Metamorphic properties of the reference evaluator over random datasets and queries: results are sorted
/// and matching, limits are prefixes and suffixes of the unlimited result, and document cursors cut it at
/// the cursor document.
@Suite("Query properties")
struct QueryPropertyTests {
    static let rounds = 300

    func dataset(_ r: inout RandomValues) -> [Document] {
        let collections = [CollectionPath(uncheckedSegments: ["users"]), CollectionPath(uncheckedSegments: ["users", "a", "users"])]
        return (0..<r.int(0...25)).map { k in r.document(in: collections, id: ["a", "b", "c", "d\(k)"][min(3, r.int(0...4))]) }
            .reduce(into: [DocumentPath: Document]()) { $0[$1.path] = $1 }.values.sorted { $0.path < $1.path }
    }

    @Test func resultsAreSortedMatchingAndLimited() throws {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for round in 0..<Self.rounds {
            let docs = dataset(&r)
            let q = r.query(over: CollectionPath(uncheckedSegments: ["users"]))
            let context = "seed \(seed) round \(round): \(q)"
            var unlimited = q
            unlimited.limit = nil
            unlimited.limitToLast = nil
            unlimited.offset = 0
            unlimited.select = nil
            let all = try unlimited.run(over: docs)
            for d in all where !q.matches(d) || !q.withinCursors(d) {
                Issue.record("\(context): \(d.path) returned but does not match")
                return
            }
            for (a, b) in zip(all, all.dropFirst()) where q.compare(a, b) >= 0 {
                Issue.record("\(context): \(a.path) and \(b.path) out of order")
                return
            }
            let expectedCount = docs.filter { q.matches($0) && q.withinCursors($0) }.count
            if all.count != expectedCount {
                Issue.record("\(context): \(all.count) results, \(expectedCount) expected")
                return
            }
            var got = try q.run(over: docs).map(\.path)
            var want: [DocumentPath]
            if let n = q.limitToLast {
                want = Array(all.dropLast(q.offset).suffix(n)).map(\.path)
            } else {
                want = Array(all.dropFirst(q.offset).prefix(q.limit ?? Int.max)).map(\.path)
            }
            if got != want {
                Issue.record("\(context): limited result \(got) but expected \(want)")
                return
            }
            // Document cursors cut the unlimited result at the cursor document.
            guard let k = all.indices.randomElement(using: &r.rng) else { continue }
            var cut = unlimited
            cut.start = nil
            cut.end = nil
            let base = try cut.run(over: docs)
            guard let at = base.firstIndex(where: { $0.path == all[k].path }) else { continue }
            for (inclusive, isStart) in [(true, true), (false, true), (true, false), (false, false)] {
                var c = cut
                let cursor = Query.Cursor(.document(all[k].path), inclusive: inclusive)
                if isStart { c.start = cursor } else { c.end = cursor }
                got = try c.run(over: docs).map(\.path)
                let slice = isStart ? Array(base[(inclusive ? at : at + 1)...]) : Array(base[..<(inclusive ? at + 1 : at)])
                want = slice.map(\.path)
                if got != want {
                    Issue.record("\(context): cursor at \(all[k].path) (start \(isStart), inclusive \(inclusive)) gave \(got), expected \(want)")
                    return
                }
            }
        }
    }
}

@Suite("Query JSON round trip")
struct QueryRoundTripTests {
    @Test func randomQueriesRoundTrip() throws {
        let seed = QT.seed()
        var r = RandomValues(seed: seed)
        for _ in 0..<2_000 {
            let q = r.query(over: CollectionPath(uncheckedSegments: ["users"]))
            let text = q.jsonText
            let back: Query
            do { back = try Query(jsonText: text) } catch {
                Issue.record("seed \(seed): \(text) did not parse back: \(error)")
                return
            }
            if back != q {
                Issue.record("seed \(seed): \(text) parsed back as \(back.jsonText)")
                return
            }
        }
    }
}
