import CSQLite
import HearthCore
import HearthSQLite

/// Queries and aggregations served from the field index (`QueryPlanner`), each in one read transaction so
/// that every document comes from the same snapshot.
extension ReadContext {
    /// The documents a query returns, in its order, after cursors, offset and limit (or limit-to-last),
    /// projected by `select`. Document cursors are looked up in the same snapshot.
    public func runQuery(_ query: Query, planning: QueryPlanning = .init()) throws -> [StoredDocument] {
        try inSnapshot {
            var out: [StoredDocument] = []
            try forEachResult(query, planning) { stored, doc in
                out.append(query.select == nil ? stored : StoredDocument(query.project(try doc ?? stored.decoded())))
                return true
            }
            return out
        }
    }

    /// The documents a query returns, whole and decoded (`select` is ignored), in its order, after cursors,
    /// offset and limit: what a listener's view holds. Planned and read like `runQuery`.
    public func queryDocuments(_ query: Query, planning: QueryPlanning = .init()) throws -> [Document] {
        try inSnapshot {
            var out: [Document] = []
            try forEachResult(query, planning) { stored, doc in
                out.append(try doc ?? stored.decoded())
                return true
            }
            return out
        }
    }

    /// An aggregation's results by alias, and (when `returningDocuments`, for a transaction to record) the
    /// documents it aggregated. A count the index decides alone counts index rows without reading documents.
    public func runAggregate(_ aggregate: AggregateQuery, returningDocuments: Bool = false,
                             planning: QueryPlanning = .init()) throws
        -> (result: [String: Value], documents: [StoredDocument]) {
        try inSnapshot {
            var query = aggregate.query
            query.select = nil
            var upTo: Int?
            let countsOnly = aggregate.aggregations.allSatisfy {
                if case .count = $0.aggregation { return true } else { return false }
            }
            if countsOnly {
                // Nothing past the largest `upTo` matters.
                let caps = aggregate.aggregations.map { a -> Int? in if case .count(let n) = a.aggregation { return n } else { return nil } }
                if !caps.contains(where: { $0 == nil }) { upTo = caps.compactMap { $0 }.max() }
                if let upTo {
                    if query.limitToLast != nil { query.limitToLast = min(query.limitToLast!, upTo) }
                    else { query.limit = min(query.limit ?? upTo, upTo) }
                }
                if !returningDocuments, let n = try exactCount(query, planning) {
                    return (Self.counts(aggregate, n), [])
                }
            }
            var n = 0
            var docs: [StoredDocument] = []
            var values: [Document] = []
            let fields = aggregate.aggregations.compactMap { a -> FieldPath? in
                switch a.aggregation {
                case .sum(let f), .avg(let f): return f
                case .count: return nil
                }
            }
            try forEachResult(query, planning) { stored, doc in
                n += 1
                if returningDocuments { docs.append(stored) }
                if !fields.isEmpty {
                    let doc = try doc ?? stored.decoded()
                    var kept: [String: Value] = [:]
                    for f in fields { if let v = doc.fields[path: f] { kept.set(v, at: f) } }
                    values.append(Document(path: doc.path, fields: kept, createTime: doc.createTime, updateTime: doc.updateTime))
                }
                return true
            }
            var result: [String: Value] = [:]
            for a in aggregate.aggregations {
                switch a.aggregation {
                case .count(let cap): result[a.alias] = .int(Int64(cap.map { min($0, n) } ?? n))
                default: result[a.alias] = AggregateQuery.aggregate(a.aggregation, values)
                }
            }
            return (result, docs)
        }
    }

    static func counts(_ aggregate: AggregateQuery, _ n: Int) -> [String: Value] {
        var result: [String: Value] = [:]
        for a in aggregate.aggregations {
            if case .count(let cap) = a.aggregation { result[a.alias] = .int(Int64(cap.map { min($0, n) } ?? n)) }
        }
        return result
    }

    /// The number of results when the index decides the query alone (counting rows), else nil.
    func exactCount(_ query: Query, _ planning: QueryPlanning) throws -> Int? {
        let forward = query.limitToLast != nil ? query.reversed : query
        if forward.start != nil || forward.end != nil { return nil }
        let plan = try QueryPlanner(query: forward, reader: self, planning: planning).plan()
        if plan.scans.isEmpty { return 0 }
        guard plan.exact, plan.scans.count == 1 else { return nil }
        var scan = plan.scans[0]
        scan.descending = false
        let cap = forward.limit.map { $0 + forward.offset }
        if let root = scan.rootCollection {
            // Nested collections with the same id share a root collection's scope: then count only its own
            // rows. Without them, every row in the scope is the root collection's.
            scan.onlyRootRowsInSQL = try hasNestedCollections(root.id)
        }
        let (sql, params) = scan.countSQL(limit: cap)
        let s = try connection.prepare(sql)
        defer { s.reset() }
        s.bind(params)
        let rows = try s.step() ? Int(s.int(0)) : 0
        return max(0, rows - forward.offset)
    }

    /// True when a collection nested under a document has held a document under this collection id.
    func hasNestedCollections(_ collectionID: String) throws -> Bool {
        let s = try connection.prepare("SELECT 1 FROM nested_groups WHERE collection_id = ?")
        defer { s.reset() }
        s.bind(1, collectionID)
        return try s.step()
    }

    /// Runs the body in a read transaction unless one is open already.
    func inSnapshot<T>(_ body: () throws -> T) throws -> T {
        if sqlite3_get_autocommit(connection.handle) == 0 { return try body() }
        try connection.prepare("BEGIN").run()
        do {
            let value = try body()
            try connection.prepare("COMMIT").run()
            return value
        } catch {
            try? connection.prepare("ROLLBACK").run()
            throw error
        }
    }

    /// Calls `body` with each result in order (unprojected, and decoded unless the index alone decided it
    /// matches) until it returns false.
    func forEachResult(_ query: Query, _ planning: QueryPlanning, _ body: (StoredDocument, Document?) throws -> Bool) throws {
        // The engine reads cursor documents under the caller's rules; the store never reads one.
        guard !query.hasDocumentCursor else {
            throw HearthError.internal("a query reached the store with a document cursor; resolve it first")
        }
        if query.limitToLast != nil {
            var results: [(StoredDocument, Document?)] = []
            try forward(query.reversed, planning) { results.append(($0, $1)); return true }
            for (stored, doc) in results.reversed() where try !body(stored, doc) { return }
            return
        }
        try forward(query, planning, body)
    }

    /// Runs a query without `limitToLast`, cursors resolved. A plan with a fallback runs within its row budget
    /// first, holding its results back, and gives way to the fallback if the budget runs out.
    func forward(_ query: Query, _ planning: QueryPlanning, _ body: (StoredDocument, Document?) throws -> Bool) throws {
        let plan = try QueryPlanner(query: query, reader: self, planning: planning).plan()
        guard let fallback = plan.fallback else {
            _ = try execute(plan, query, budget: nil, body)
            return
        }
        var held: [(StoredDocument, Document?)] = []
        if try execute(plan, query, budget: planning.orderedScanBudget, { held.append(($0, $1)); return true }) {
            for (stored, doc) in held where try !body(stored, doc) { return }
            return
        }
        // The ordered scan is slow to reach the limit; collecting is better only if it reads fewer documents.
        let alternative = try fallback()
        let cap = Self.fallbackRowsPerBudgetRow * planning.orderedScanBudget
        var rows = 0
        let planner = QueryPlanner(query: query, reader: self, planning: planning)
        for scan in alternative.scans where rows < cap { rows += try planner.estimate(scan, cap: cap - rows) }
        _ = try execute(rows < cap ? alternative : plan, query, budget: nil, body)
    }

    /// Past its budget, an ordered scan gives way to collecting only when that reads fewer than this many
    /// times the budget's rows; otherwise finishing the scan (one index probe per row, against a fetch,
    /// decode and sort per collected document) is likely cheaper.
    static let fallbackRowsPerBudgetRow = 4

    /// Runs one plan; false when it stopped because it read more than `budget` index rows.
    func execute(_ plan: QueryPlan, _ query: Query, budget: Int?,
                 _ body: (StoredDocument, Document?) throws -> Bool) throws -> Bool {
        var rows = 0
        var exhausted = false
        var fetched = 0
        let order = query.normalizedOrder
        defer { statistics?.addScanned(fetched) }
        // Counts a row against the budget; false once it is spent.
        func spend() -> Bool {
            rows += 1
            if let budget, rows > budget {
                exhausted = true
                return false
            }
            return true
        }
        var startOnly = query, endOnly = query
        startOnly.end = nil
        endOnly.start = nil
        var skipped = 0, delivered = 0
        // False once nothing further can be a result.
        func deliver(_ stored: StoredDocument, _ doc: Document?) throws -> Bool {
            // Documents are decoded whenever the query has cursors (see the stream case).
            if let doc {
                if query.start != nil && !startOnly.withinCursors(doc, order: order) { return true }
                if query.end != nil && !endOnly.withinCursors(doc, order: order) { return false }
            }
            if skipped < query.offset {
                skipped += 1
                return true
            }
            delivered += 1
            guard try body(stored, doc) else { return false }
            if let limit = query.limit, delivered >= limit { return false }
            return true
        }
        func sorted(_ items: [(StoredDocument, Document)]) -> [(StoredDocument, Document)] {
            items.sorted { Query.compare($0.1, $1.1, order: order) < 0 }
        }

        switch plan.mode {
        case .stream where plan.exact && query.start == nil && query.end == nil:
            // The rows are exactly the results, in order: no document needs decoding to be checked.
            guard let scan = plan.scans.first else { return true }
            try scanRows(scan) { _, path in
                guard spend() else { return false }
                fetched += 1
                guard let stored = try document(at: path) else { return true }
                return try deliver(stored, nil)
            }
        case .stream:
            guard let scan = plan.scans.first else { return true }
            try scanRows(scan) { _, path in
                guard spend() else { return false }
                fetched += 1
                guard let (stored, doc) = try candidate(path), query.matches(doc, order: order) else { return true }
                return try deliver(stored, doc)
            }
        case .sortRuns:
            guard let scan = plan.scans.first else { return true }
            var run: [(StoredDocument, Document)] = []
            var runKey: [UInt8] = []
            var stopped = false
            try scanRows(scan) { key, path in
                guard spend() else { return false }
                if key != runKey {
                    for (stored, doc) in sorted(run) where try !deliver(stored, doc) {
                        stopped = true
                        return false
                    }
                    run.removeAll(keepingCapacity: true)
                    runKey = key
                }
                fetched += 1
                if let (stored, doc) = try candidate(path), query.matches(doc, order: order) { run.append((stored, doc)) }
                return true
            }
            if stopped || exhausted { return !exhausted }
            for (stored, doc) in sorted(run) where try !deliver(stored, doc) { return true }
        case .collect:
            var seen = Set<DocumentPath>()
            var all: [(StoredDocument, Document)] = []
            for scan in plan.scans {
                try scanRows(scan) { _, path in
                    guard seen.insert(path).inserted else { return true }
                    fetched += 1
                    guard let (stored, doc) = try candidate(path), query.matches(doc, order: order) else { return true }
                    all.append((stored, doc))
                    return true
                }
            }
            for (stored, doc) in sorted(all) where try !deliver(stored, doc) { return true }
        }
        return !exhausted
    }

    /// The stored and decoded document at a path named by an index row.
    func candidate(_ path: DocumentPath) throws -> (StoredDocument, Document)? {
        guard let stored = try document(at: path) else { return nil }
        return (stored, try stored.decoded())
    }

    /// Steps through a scan's rows (key, document path) until the body returns false.
    func scanRows(_ scan: IndexScan, _ body: ([UInt8], DocumentPath) throws -> Bool) throws {
        let (sql, params) = scan.sql()
        let s = try connection.prepare(sql)
        defer { s.reset() }
        s.bind(params)
        while try s.step() {
            guard let path = scan.path(ofDoc: s.blob(1)) else { continue }
            guard try body(s.blob(0), path) else { return }
        }
    }
}
