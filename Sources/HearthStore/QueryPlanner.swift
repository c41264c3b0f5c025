import HearthCore
import HearthSQLite

/// How the field index serves one query: the scans to run and what their rows' order is worth.
struct QueryPlan {
    /// What the rows' order is worth.
    enum Mode {
        /// The rows come in the query's order: stream them.
        case stream
        /// The rows come in the order of the query's first ordering only: sort each run of equal keys.
        case sortRuns
        /// The rows come in no useful order (or from several scans): collect, de-duplicate and sort them.
        case collect
    }

    /// The scans; more than one only in `collect` mode (a union).
    var scans: [IndexScan]
    var mode: Mode
    /// True when the scans alone decide which documents match (no filter left to check), so that a count
    /// can count rows without reading documents.
    var exact = false
    /// The plan to switch to when this one reads more than its budget of rows (adaptive planning).
    var fallback: (() throws -> QueryPlan)?

    /// A plan that returns nothing.
    static var empty: QueryPlan { QueryPlan(scans: [], mode: .collect) }
}

/// How the planner trades an ordered scan (which stops at the limit) against collecting and sorting the
/// matches of an equality (or a union of them).
public struct QueryPlanning: Sendable {
    /// The choice between the two.
    public enum Strategy: Sendable {
        /// Limited queries try the ordered scan within `orderedScanBudget` rows, then collect; unlimited
        /// queries collect.
        case adaptive
        /// Always the ordered scan when one can serve the query.
        case ordered
        /// Always collect when the filter allows it.
        case collect
    }

    /// The strategy.
    public var strategy = Strategy.adaptive
    /// Index rows an adaptive ordered scan may read before it gives up for the collecting plan.
    public var orderedScanBudget = 2_000

    /// The default planning.
    public init() {}
}

/// Chooses the scans for a query (forward, with resolved cursors). Every candidate a plan yields is still
/// checked against the whole query in memory, so a plan only has to yield a superset of the results in a
/// usable order; the planner's work is keeping that superset small.
///
/// - The query's first ordering drives an ordered scan of that field's index (ranges from its filters and
///   the cursors), with the equality and array-contains filters on other fields as index probes.
/// - An equality or array-contains filter drives a scan of that value's entries (in `__name__` order) when
///   that order is the query's, when the query has no limit, or when the ordered scan reads more rows than
///   its budget before reaching the limit (adaptive planning: the scan then yields to this plan).
/// - Disjunctions (`or`, `in`, `array-contains-any`) run as a union of equality scans, one per term of the
///   disjunctive normal form, when each term has one, on the same conditions.
struct QueryPlanner {
    let query: Query
    let order: [Query.Order]
    let reader: ReadContext
    /// The conjuncts of the filter's top-level `and`.
    let conjuncts: [FieldFilter]
    let planning: QueryPlanning
    /// The single-field overrides of the queried collection id (nil: every field indexed).
    let overrides: FieldOverrides?

    init(query: Query, reader: ReadContext, planning: QueryPlanning) {
        self.query = query
        self.planning = planning
        self.order = query.normalizedOrder
        self.reader = reader
        self.conjuncts = Self.conjuncts(query.filter)
        self.overrides = reader.composites.overrides(of: query.source.collectionID)
    }

    static func conjuncts(_ filter: Filter?) -> [FieldFilter] {
        switch filter {
        case nil: return []
        case .field(let f)?: return [f]
        case .and(let items)?: return items.flatMap { conjuncts($0) }
        case .or(let items)? where items.count == 1: return conjuncts(items[0])
        case .or?: return []
        }
    }

    /// An index lookup standing for an equality or array-contains filter.
    struct Lookup {
        var field: String
        var key: [UInt8]
        /// The field path it constrains with `==` (nil for array-contains).
        var equalField: FieldPath?
    }

    /// The lookup standing for a filter, when the filter's field keeps the entries it needs.
    func lookup(_ f: FieldFilter) -> Lookup? {
        if let overrides, !f.field.isDocumentName, !overrides.indexing(of: f.field).serves(f.op) { return nil }
        return Self.lookup(f)
    }

    static func lookup(_ f: FieldFilter) -> Lookup? {
        if f.field.isDocumentName { return nil }
        switch f.op {
        case .equal: return Lookup(field: IndexEntry.valueField(f.field), key: IndexKey.encode(f.value), equalField: f.field)
        case .arrayContains: return Lookup(field: IndexEntry.containsField(f.field), key: IndexKey.encode(f.value), equalField: nil)
        default: return nil
        }
    }

    func plan() throws -> QueryPlan {
        let lookups = conjuncts.compactMap(lookup)
        let first = order[0]
        let strategy: QueryPlanning.Strategy = planning.strategy == .adaptive && query.limit == nil ? .collect : planning.strategy

        if !first.field.isDocumentName, let composite = compositePlan() { return composite }
        try requireSingleFieldEntries()
        if first.field.isDocumentName {
            if !lookups.isEmpty {
                let best = try cheapest(lookups)
                return finish(QueryPlan(scans: [equalityScan(best, others: lookups)], mode: .stream))
            }
            return try withUnion(finish(QueryPlan(scans: [nameScan()], mode: .stream)), strategy)
        }

        let ordered = finish(QueryPlan(scans: [orderScan(first, lookups: lookups)],
                                       mode: order.count == 2 && order[1].field.isDocumentName && order[1].direction == first.direction
                                           ? .stream : .sortRuns))
        if !lookups.isEmpty {
            if orderFollowsNames(constrainedBy: lookups) {
                return finish(QueryPlan(scans: [equalityScan(try cheapest(lookups), others: lookups)], mode: .stream))
            }
            let collect = { () throws -> QueryPlan in
                self.finish(QueryPlan(scans: [self.equalityScan(try self.cheapest(lookups), others: lookups)], mode: .collect))
            }
            switch strategy {
            case .ordered: return ordered
            case .collect: return try collect()
            case .adaptive:
                var plan = ordered
                plan.fallback = collect
                return plan
            }
        }
        return try withUnion(ordered, strategy)
    }

    /// The plan, or a union of equality scans instead (or as its fallback) when the filter allows one.
    func withUnion(_ plan: QueryPlan, _ strategy: QueryPlanning.Strategy) throws -> QueryPlan {
        guard strategy != .ordered, let union = unionPlan() else { return plan }
        if strategy == .collect { return union }
        var plan = plan
        plan.fallback = { union }
        return plan
    }

    /// Drops empty scans and marks plans whose scans decide the filter alone.
    func finish(_ plan: QueryPlan) -> QueryPlan {
        var plan = plan
        plan.scans.removeAll(where: \.isEmpty)
        if plan.scans.isEmpty { return .empty }
        plan.exact = plan.scans.count == 1 && isExact(plan.scans[0])
        return plan
    }

    // MARK: scans

    /// A scan of one `field` column over the query's source, narrowed by `under` and `__name__` filters.
    func baseScan(_ field: String) -> IndexScan {
        var scan: IndexScan
        switch query.source {
        case .collection(let c) where c.segments.count == 1:
            // A root collection's rows are the group scope's paths that start with it (see IndexEntry).
            scan = IndexScan(scope: IndexEntry.groupScope(c.id), collection: nil, field: field)
            scan.rootCollection = c
            let prefix = IndexKey.prefix(segments: c.segments)
            scan.narrowDocLower(.init(key: prefix, inclusive: true))
            scan.narrowDocUpper(.init(key: prefix + [0xFF], inclusive: false))
        case .collection(let c):
            scan = IndexScan(scope: IndexEntry.collectionScope(c), collection: c, field: field)
        case .collectionGroup(let id, let under):
            scan = IndexScan(scope: IndexEntry.groupScope(id), collection: nil, field: field)
            if let under {
                let prefix = IndexKey.prefix(segments: under.segments)
                // Past the `under` document itself (its key is the prefix and the path terminator).
                scan.narrowDocLower(.init(key: prefix + [0x00, 0x00], inclusive: false))
                scan.narrowDocUpper(.init(key: prefix + [0xFF], inclusive: false))
            } else {
                // Over the whole database: not the other databases' documents below their reserved root.
                scan.excludedDocPrefix = IndexKey.prefix(segments: [CollectionPath.namespacesRoot])
            }
        }
        for f in conjuncts where f.field.isDocumentName {
            guard case .reference(let path) = f.value else { continue }
            guard let key = scan.docKey(path) else {
                // A path outside a collection query's collection: `==` matches nothing; other bounds are left to
                // the in-memory check.
                if f.op == .equal { scan.narrowDocLower(.init(key: [0xFF], inclusive: true)); scan.narrowDocUpper(.init(key: [], inclusive: true)) }
                continue
            }
            switch f.op {
            case .equal:
                scan.narrowDocLower(.init(key: key, inclusive: true))
                scan.narrowDocUpper(.init(key: key, inclusive: true))
            case .lessThan: scan.narrowDocUpper(.init(key: key, inclusive: false))
            case .lessThanOrEqual: scan.narrowDocUpper(.init(key: key, inclusive: true))
            case .greaterThan: scan.narrowDocLower(.init(key: key, inclusive: false))
            case .greaterThanOrEqual: scan.narrowDocLower(.init(key: key, inclusive: true))
            default: break
            }
        }
        return scan
    }

    /// The scan of `__name__` entries in the name order's direction, from cursor to cursor.
    func nameScan() -> IndexScan {
        var scan = baseScan(IndexEntry.nameField)
        let direction = order[0].direction
        scan.descending = direction == .descending
        if case .reference(let p)? = firstCursorValue(query.start), let key = scan.docKey(p) {
            if direction == .ascending { scan.narrowDocLower(.init(key: key, inclusive: true)) }
            else { scan.narrowDocUpper(.init(key: key, inclusive: true)) }
        }
        if case .reference(let p)? = firstCursorValue(query.end), let key = scan.docKey(p) {
            if direction == .ascending { scan.narrowDocUpper(.init(key: key, inclusive: true)) }
            else { scan.narrowDocLower(.init(key: key, inclusive: true)) }
        }
        return scan
    }

    /// The ordered scan of the first ordering's field, narrowed by its filters and the cursors.
    func orderScan(_ first: Query.Order, lookups: [Lookup]) -> IndexScan {
        var scan = baseScan(IndexEntry.valueField(first.field))
        scan.descending = first.direction == .descending
        scan.appliesRanges = true
        let (lower, upper) = valueRange(first.field, direction: first.direction)
        if let lower { scan.narrowLower(.init(key: lower.key, inclusive: lower.inclusive)) }
        if let upper { scan.narrowUpper(.init(key: upper.key, inclusive: upper.inclusive)) }
        scan.probes = lookups.filter { $0.field != scan.field }.map { ($0.field, $0.key) }
        return scan
    }

    /// The scan of one value's entries, in the name order's direction, probing the other lookups.
    func equalityScan(_ lookup: Lookup, others: [Lookup]) -> IndexScan {
        var scan = baseScan(lookup.field)
        scan.narrowLower(.init(key: lookup.key, inclusive: true))
        scan.narrowUpper(.init(key: lookup.key, inclusive: true))
        scan.descending = nameDirection == .descending
        scan.probes = others.filter { !($0.field == lookup.field && $0.key == lookup.key) }.map { ($0.field, $0.key) }
        return scan
    }

    var nameDirection: Query.Direction {
        order.first(where: \.field.isDocumentName)?.direction ?? .ascending
    }

    /// True when every ordering before `__name__` is on a field fixed by an `==` filter, so that name order
    /// is the query's order.
    func orderFollowsNames(constrainedBy lookups: [Lookup]) -> Bool {
        let fixed = Set(lookups.compactMap(\.equalField))
        for o in order {
            if o.field.isDocumentName { return true }
            if !fixed.contains(o.field) { return false }
        }
        return true
    }

    func firstCursorValue(_ cursor: Query.Cursor?) -> Value? {
        guard case .values(let values)? = cursor?.position else { return nil }
        return values.first
    }

    // MARK: estimates

    /// How many rows a scan yields, counted up to `cap`.
    func estimate(_ scan: IndexScan, cap: Int) throws -> Int {
        var bare = scan
        bare.probes = []
        let (sql, params) = bare.sql(limit: cap)
        let s = try reader.connection.prepare("SELECT count(*) FROM (\(sql))")
        defer { s.reset() }
        s.bind(params)
        return try s.step() ? Int(s.int(0)) : 0
    }

    /// The lookup with the fewest rows (counted up to a bound), which the others then probe.
    func cheapest(_ lookups: [Lookup]) throws -> Lookup {
        if lookups.count == 1 { return lookups[0] }
        var best: (Lookup, Int)?
        for l in lookups {
            let n = try estimate(equalityScan(l, others: []), cap: best.map { $0.1 } ?? Self.estimateCap)
            if best == nil || n < best!.1 { best = (l, n) }
        }
        return best!.0
    }

    /// Rows counted at most when comparing lookups.
    static let estimateCap = 1_000

    // MARK: unions

    /// A union of equality scans, one per term of the filter's disjunctive normal form (`in` and
    /// `array-contains-any` values as separate terms), when every term has an equality.
    func unionPlan() -> QueryPlan? {
        guard let filter = query.filter, filter.hasDisjunction || conjuncts.contains(where: { $0.op == .in || $0.op == .arrayContainsAny })
        else { return nil }
        guard let terms = Self.terms(filter, cap: Limits.maxDisjunctions) else { return nil }
        var scans: [IndexScan] = []
        for term in terms {
            let lookups = term.compactMap(lookup)
            if let best = lookups.first {
                scans.append(equalityScan(best, others: lookups))
            } else if let name = term.first(where: { $0.field.isDocumentName && $0.op == .equal }),
                      case .reference(let path) = name.value {
                var scan = baseScan(IndexEntry.nameField)
                guard let key = scan.docKey(path) else { continue }  // outside the collection: matches nothing
                scan.narrowDocLower(.init(key: key, inclusive: true))
                scan.narrowDocUpper(.init(key: key, inclusive: true))
                scans.append(scan)
            } else {
                return nil
            }
        }
        var plan = QueryPlan(scans: scans.filter { !$0.isEmpty }, mode: .collect)
        if plan.scans.isEmpty { plan = .empty }
        return plan
    }

    /// The terms of the filter's disjunctive normal form with list operators split into their values; nil
    /// past `cap` terms.
    static func terms(_ filter: Filter, cap: Int) -> [[FieldFilter]]? {
        switch filter {
        case .field(let f):
            switch f.op {
            case .in: return f.values.count <= cap ? f.values.map { [FieldFilter(field: f.field, op: .equal, value: $0)] } : nil
            case .arrayContainsAny:
                return f.values.count <= cap ? f.values.map { [FieldFilter(field: f.field, op: .arrayContains, value: $0)] } : nil
            default: return [[f]]
            }
        case .or(let items):
            var out: [[FieldFilter]] = []
            for item in items {
                guard let sub = terms(item, cap: cap) else { return nil }
                out += sub
                if out.count > cap { return nil }
            }
            return out
        case .and(let items):
            var out: [[FieldFilter]] = [[]]
            for item in items {
                guard let sub = terms(item, cap: cap) else { return nil }
                out = out.flatMap { t in sub.map { t + $0 } }
                if out.count > cap { return nil }
            }
            return out
        }
    }

    // MARK: overrides

    /// Refuses a query that no composite index serves and that needs single-field entries an override
    /// removed (a filter's or an ordering's field), as Firestore refuses a query that needs a missing index.
    func requireSingleFieldEntries() throws(HearthError) {
        guard let overrides else { return }
        var needs = order.filter { !$0.field.isDocumentName }.map { ($0.field, FilterOperator.lessThan) }
        for f in query.filter?.fieldFilters ?? [] where !f.field.isDocumentName { needs.append((f.field, f.op)) }
        for (field, op) in needs where !overrides.indexing(of: field).serves(op) {
            let kind = FieldIndexing.needsElements(op) ? "array elements" : "values"
            throw .failedPrecondition(
                "the query needs the index of '\(field)' (its \(kind)) in '\(query.source.collectionID)', which a field "
                    + "override of the index file exempts; restore that index in the override, or add a composite index that serves the query")
        }
    }

    // MARK: exactness

    /// True when the scan's rows are exactly the query's matches: no cursors, every filter a conjunct the scan
    /// decides (its key range, its probes, `__name__` bounds), and every ordered field implied by one.
    func isExact(_ scan: IndexScan) -> Bool {
        if query.start != nil || query.end != nil { return false }
        if !filterIsConjunction { return false }
        var decided = Set<FieldPath>()
        for f in conjuncts {
            if let l = lookup(f) {
                let inScan = (l.field == scan.field && scan.isSingleKey && scan.lower!.key == l.key)
                    || scan.probes.contains(where: { $0.field == l.field && $0.key == l.key })
                guard inScan else { return false }
                if let e = l.equalField { decided.insert(e) }
                continue
            }
            if f.field.isDocumentName {
                guard Self.nameBoundIsExact(f, in: scan) else { return false }
                continue
            }
            // Range filters on the scanned field are exact: its key range is the operand's type class.
            guard f.op.isRange, scan.appliesRanges, IndexEntry.valueField(f.field) == scan.field else { return false }
            decided.insert(f.field)
        }
        if scan.field != IndexEntry.nameField && !scan.field.hasPrefix(IndexEntry.containsMarker) {
            // The scanned field exists in every row.
            if let o = order.first, IndexEntry.valueField(o.field) == scan.field { decided.insert(o.field) }
        }
        return order.allSatisfy { $0.field.isDocumentName || decided.contains($0.field) }
    }

    /// True when the filter is a plain conjunction of field filters (no `or` left after flattening).
    var filterIsConjunction: Bool {
        guard let filter = query.filter else { return true }
        return Self.conjuncts(filter).count == filter.fieldFilters.count
    }

    /// True when a `__name__` filter is decided by the scan's document bounds: a path inside the collection,
    /// compared with `==` or a range (a path elsewhere is left to the in-memory check).
    static func nameBoundIsExact(_ f: FieldFilter, in scan: IndexScan) -> Bool {
        guard case .reference(let p) = f.value, scan.docKey(p) != nil else { return false }
        return [.equal, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual].contains(f.op)
    }
}
