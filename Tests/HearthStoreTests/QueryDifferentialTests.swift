import Foundation
import HearthCore
import HearthStore
import HearthTesting
import Testing

/// The indexed query engine against the reference evaluator (`Query.run(over:)`): seeded random documents
/// (mixed types, missing fields, arrays, maps, NaN, -0.0, equal integers and doubles, long strings), written,
/// rewritten and deleted through the store, then thousands of seeded random valid queries and aggregations,
/// whose results must be identical, order included. A failure prints the seed and a shrunk query.
///
/// `HEARTH_DIFF_SEED=<n>` replays one seed.
@Suite("Query differential")
struct QueryDifferentialTests {
    static let datasets = 6
    static let queriesPerDataset = 800
    static let aggregatesPerDataset = 100

    static let collections = [
        CollectionPath(uncheckedSegments: ["users"]),
        CollectionPath(uncheckedSegments: ["users", "a", "users"]),
        CollectionPath(uncheckedSegments: ["users", "b", "users"]),
        CollectionPath(uncheckedSegments: ["posts"]),
    ]

    static var seeds: [UInt64] {
        if let text = ProcessInfo.processInfo.environment["HEARTH_DIFF_SEED"], let seed = UInt64(text) { return [seed] }
        return (0..<UInt64(datasets)).map { 0x4845_4152_5448 &+ $0 &* 7919 }
    }

    @Test(arguments: seeds)
    func indexedEqualsReference(seed: UInt64) async throws {
        try await HeavyWork.run { try await checkIndexedEqualsReference(seed: seed) }
    }

    private func checkIndexedEqualsReference(seed: UInt64) async throws {
        let directory = TestFolders.path("hearth-diff")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(configuration: .init(dataDirectory: directory))
        defer { store.close() }
        var r = RandomValues(seed: seed)
        let docs = try await load(&r, into: store)

        for round in 0..<Self.queriesPerDataset {
            var q = r.query(over: Self.collections[0])
            mutate(&q, docs: docs, &r)
            if let failure = try await compare(q, docs: docs, store: store) {
                let small = try await shrink(q, docs: docs, store: store)
                Issue.record("""
                    seed \(seed) query \(round): \(failure)
                    query: \(q.jsonText)
                    shrunk: \(small.jsonText)
                    shrunk result: \(try await compare(small, docs: docs, store: store) ?? "passes")
                    """)
                return
            }
        }
        for round in 0..<Self.aggregatesPerDataset {
            // Also a root collection that no nested collection shares its id with (`posts`).
            var q = r.query(over: Self.collections[r.chance(0.3) ? 3 : 0])
            mutate(&q, docs: docs, &r)
            q.select = nil
            var aggregations: [AggregateQuery.Named] = [.init("n", .count(upTo: r.chance(0.3) ? r.int(1...4) : nil))]
            if r.chance(0.6) {
                let field = FieldPath(uncheckedSegments: [r.pick(["a", "b", "c"])])
                aggregations.append(.init("s", .sum(field)))
                aggregations.append(.init("v", .avg(field)))
            }
            if r.chance(0.5) { aggregations.removeFirst() }
            let aggregate = AggregateQuery(query: q, aggregations: aggregations)
            guard (try? aggregate.validate()) != nil else { continue }
            let expected = Result { () throws(HearthError) in try aggregate.compute(over: docs) }
            for (name, planning) in Self.plannings {
                let actual = await asyncResult {
                    var asked = aggregate
                    asked.query = try Self.resolvingCursors(q, in: docs)
                    return try await store.read { [asked] in try $0.runAggregate(asked, planning: planning).result }
                }
                switch (expected, actual) {
                case (.success(let e), .success(let a)) where e == a: continue
                case (.failure(let e), .failure(let a as HearthError)) where e == a: continue
                default:
                    Issue.record("seed \(seed) aggregate \(round) [\(name) planning]: expected \(expected), got \(actual)\nquery: \(q.jsonText) \(aggregations)")
                    return
                }
            }
        }
    }

    /// Writes a random dataset, then rewrites and deletes some of it (exercising index updates), and returns
    /// what is stored in the end.
    /// A seeded dataset written through a store opened with `writing`'s configuration, then the store reopened
    /// with `reading`'s (so that indexes or overrides are built over data already stored), for `body`; the
    /// folder is removed afterwards.
    func withReopenedDataset(seed: UInt64, writing: (inout Store.Configuration) throws -> Void = { _ in },
                             reading: (inout Store.Configuration) throws -> Void,
                             _ body: (Store, [Document], inout RandomValues) async throws -> Void) async throws {
        let directory = TestFolders.path("hearth-reopened")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Store.Configuration(dataDirectory: directory)
        try writing(&configuration)
        var store = try Store(configuration: configuration)
        var r = RandomValues(seed: seed)
        let docs = try await load(&r, into: store)
        store.close()
        try reading(&configuration)
        store = try Store(configuration: configuration)
        defer { store.close() }
        try await body(store, docs, &r)
    }

    func load(_ r: inout RandomValues, into store: Store) async throws -> [Document] {
        var current: [DocumentPath: Document] = [:]
        let ids = ["a", "b", "c", "é", "A", "a b", "zz"] + (0..<60).map { "d\($0)" }
        for _ in 0..<140 {
            let doc = r.document(in: Self.collections, id: r.pick(ids))
            // Some documents get a long string or a deeper map, to cover key lengths and nested fields.
            var fields = doc.fields
            if r.chance(0.1) { fields["c"] = .string(String(repeating: r.pick(["a", "é", "z"]), count: r.int(100...2_000))) }
            if r.chance(0.1) { fields["m"] = .map(["x": r.smallValue(), "y": .map(["z": r.value()])]) }
            // Values of any type and edge numbers (±Infinity, int64 and 2^53 edges, subnormals) beside the small pool.
            if r.chance(0.25) { fields[r.pick(["a", "b", "c"])] = r.value() }
            if r.chance(0.25) { fields[r.pick(["a", "b"])] = r.number() }
            current[doc.path] = Document(path: doc.path, fields: fields, createTime: doc.createTime, updateTime: doc.updateTime)
        }
        let initial = Array(current.values)
        try await store.write { context in
            let t = context.nextCommitTime()
            for (k, doc) in initial.enumerated() {
                // Both ways in: with the fields in hand, and from the stored bytes alone.
                if k % 2 == 0 { try context.put(StoredDocument(doc), fields: doc.fields, previous: nil, commitTime: t) }
                else { try context.put(StoredDocument(doc), commitTime: t) }
            }
        }
        var rewrites: [Document] = []
        var deletes: [DocumentPath] = []
        for doc in initial.sorted(by: { $0.path < $1.path }) {
            if r.chance(0.25) {
                var fields = r.document(in: Self.collections, id: "x").fields
                if r.chance(0.5) { fields["a"] = doc.fields["a"] }  // partly unchanged entries
                let new = Document(path: doc.path, fields: fields, createTime: doc.createTime, updateTime: doc.updateTime)
                rewrites.append(new)
                current[doc.path] = new
            } else if r.chance(0.1) {
                deletes.append(doc.path)
                current[doc.path] = nil
            }
        }
        let old = Dictionary(uniqueKeysWithValues: initial.map { ($0.path, $0.fields) })
        try await store.write { [rewrites, deletes] context in
            let t = context.nextCommitTime()
            for (k, doc) in rewrites.enumerated() {
                if k % 2 == 0 { try context.put(StoredDocument(doc), fields: doc.fields, previous: old[doc.path], commitTime: t) }
                else { try context.put(StoredDocument(doc), commitTime: t) }
            }
            for (k, path) in deletes.enumerated() {
                if k % 2 == 0 { try context.delete(path, previous: old[path], commitTime: t) } else { try context.delete(path, commitTime: t) }
            }
        }
        return current.values.sorted { $0.path < $1.path }
    }

    /// Widens what the generator covers: group queries under a document, and document cursors.
    func mutate(_ q: inout Query, docs: [Document], _ r: inout RandomValues) {
        if case .collectionGroup(let id, nil) = q.source, r.chance(0.4) {
            q.source = .collectionGroup(id: id, under: DocumentPath(uncheckedSegments: ["users", r.pick(["a", "b", "c"])]))
        }
        let inSource = docs.filter { q.contains(path: $0.path) }
        if !inSource.isEmpty, r.chance(0.15) {
            q.start = Query.Cursor(.document(r.pick(inSource).path), inclusive: r.chance(0.5))
        }
        if !inSource.isEmpty, r.chance(0.1) {
            q.end = Query.Cursor(.document(r.pick(inSource).path), inclusive: r.chance(0.5))
        }
    }

    /// Plannings that force each kind of plan: the default, always an ordered scan when one can serve the
    /// query (equality filters as probes), always collecting an equality's or a union's matches, and an
    /// adaptive ordered scan whose budget runs out after a few rows, so that it falls back mid-scan.
    static let plannings: [(String, QueryPlanning)] = {
        var ordered = QueryPlanning()
        ordered.strategy = .ordered
        var collect = QueryPlanning()
        collect.strategy = .collect
        var fallback = QueryPlanning()
        fallback.orderedScanBudget = 3
        return [("default", QueryPlanning()), ("ordered", ordered), ("collect", collect), ("fallback", fallback)]
    }()

    /// Nil when the store answers the query as the reference does under every planning; otherwise what differs.
    func compare(_ q: Query, docs: [Document], store: Store) async throws -> String? {
        for (name, planning) in Self.plannings {
            if let failure = try await compare(q, docs: docs, store: store, planning: planning) { return "[\(name) planning] " + failure }
        }
        // As the HTTP server's event loops run queries (with a larger bound): the read stops with
        // `ReadBudgetExceeded`, or answers as the reference does.
        let expected = Result { () throws(HearthError) in try q.run(over: docs) }
        let bounded = Result {
            let asked = try Self.resolvingCursors(q, in: docs)
            return try store.boundedRead(instructions: 3_000) { try $0.runQuery(asked).map { try $0.decoded() } }
        }
        switch (expected, bounded) {
        case (_, .failure(let error)) where error is ReadBudgetExceeded: return nil
        case (.success(let e), .success(let a)) where e == a: return nil
        case (.failure(let e), .failure(let a as HearthError)) where e == a: return nil
        default: return "[bounded read] expected \(expected), got \(bounded)"
        }
    }

    func compare(_ q: Query, docs: [Document], store: Store, planning: QueryPlanning) async throws -> String? {
        let expected = Result { () throws(HearthError) in try q.run(over: docs) }
        let actual = await asyncResult {
            let asked = try Self.resolvingCursors(q, in: docs)
            return try await store.read { try $0.runQuery(asked, planning: planning).map { try $0.decoded() } }
        }
        switch (expected, actual) {
        case (.success(let e), .success(let a)):
            if e == a { return nil }
            // The documents involved, so that the case can be replayed by hand.
            let involved = Set(e.map(\.path)).symmetricDifference(a.map(\.path))
            let shown = docs.filter { involved.contains($0.path) || (involved.isEmpty && e.map(\.path).contains($0.path)) }
            return "expected \(e.map(\.path.description)), got \(a.map(\.path.description))"
                + (e.map(\.path) == a.map(\.path) ? " (fields differ)" : "")
                + "\n  documents: " + shown.map { "\($0.path) \(Value.map($0.fields).wireText)" }.joined(separator: "\n    ")
        case (.failure(let e), .failure(let a as HearthError)):
            return e == a ? nil : "expected error \(e), got \(a)"
        case (.failure(let e), _):
            return "expected error \(e), got \(actual)"
        case (.success(let e), .failure(let a)):
            return "expected \(e.map(\.path.description)), got error \(a)"
        }
    }

    /// The query as the engine hands it to the store: document cursors replaced by the values of the documents
    /// they name.
    static func resolvingCursors(_ q: Query, in docs: [Document]) throws(HearthError) -> Query {
        try q.resolvingCursors { path in docs.first { $0.path == path } }
    }

    /// A smaller query that still fails: drops filter branches, orderings, cursors, offset, limits and the
    /// projection while the result still differs.
    func shrink(_ query: Query, docs: [Document], store: Store) async throws -> Query {
        var q = query
        var progress = true
        while progress {
            progress = false
            for candidate in smaller(q) where (try? candidate.validate()) != nil {
                if try await compare(candidate, docs: docs, store: store) != nil {
                    q = candidate
                    progress = true
                    break
                }
            }
        }
        return q
    }

    func smaller(_ q: Query) -> [Query] {
        var out: [Query] = []
        func with(_ change: (inout Query) -> Void) { var c = q; change(&c); out.append(c) }
        if q.filter != nil { with { $0.filter = nil } }
        if let filter = q.filter {
            for f in smallerFilters(filter) { with { $0.filter = f } }
        }
        for k in q.orderBy.indices { with { $0.orderBy.remove(at: k) } }
        if q.start != nil { with { $0.start = nil } }
        if q.end != nil { with { $0.end = nil } }
        if q.offset != 0 { with { $0.offset = 0 } }
        if q.limit != nil { with { $0.limit = nil } }
        if q.limitToLast != nil { with { $0.limitToLast = nil } }
        if q.select != nil { with { $0.select = nil } }
        if case .collectionGroup(let id, _?) = q.source { with { $0.source = .collectionGroup(id: id, under: nil) } }
        return out
    }

    func smallerFilters(_ f: Filter) -> [Filter] {
        switch f {
        case .field: return []
        case .and(let items), .or(let items):
            var out: [Filter] = items
            for k in items.indices {
                var rest = items
                rest.remove(at: k)
                if !rest.isEmpty {
                    if case .and = f { out.append(.and(rest)) } else { out.append(.or(rest)) }
                }
                for s in smallerFilters(items[k]) {
                    var replaced = items
                    replaced[k] = s
                    if case .and = f { out.append(.and(replaced)) } else { out.append(.or(replaced)) }
                }
            }
            return out
        }
    }
}

/// The outcome of an async throwing call.
func asyncResult<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
