import HearthCore

/// Plans over composite indexes (`CompositeIndex`). A composite entry's key is its fields' keys in index
/// order (descending ones complemented, every direction flipped when the last is descending), so an index
/// whose first fields carry the query's equality (and array-contains) values and whose other fields are the
/// query's ordering, directions all alike or all reversed, holds the query's matches as one key range, in
/// query order.
extension QueryPlanner {
    /// A bound on the values of one field, in ascending key space. `isClass` marks the bounds of a value's
    /// type class (`IndexKey.rangeClass`), which are key prefixes rather than whole keys.
    struct ValueBound {
        var key: [UInt8]
        var inclusive: Bool
        var isClass = false
    }

    /// The bounds the filters on `field` and the cursors (when it is the first ordering) put on its values.
    func valueRange(_ field: FieldPath, direction: Query.Direction) -> (lower: ValueBound?, upper: ValueBound?) {
        var lower: ValueBound?, upper: ValueBound?
        // The tighter of two bounds: the higher lower bound, the lower upper bound; on equal keys, exclusive wins.
        func tighter(_ a: ValueBound?, _ b: ValueBound, keepHigher: Bool) -> ValueBound {
            guard let a else { return b }
            let c = compareKeys(a.key, b.key)
            if c == 0 { return ValueBound(key: a.key, inclusive: a.inclusive && b.inclusive, isClass: a.isClass && b.isClass) }
            return (c < 0) == keepHigher ? b : a
        }
        func raise(_ b: ValueBound) { lower = tighter(lower, b, keepHigher: true) }
        func drop(_ b: ValueBound) { upper = tighter(upper, b, keepHigher: false) }
        for f in conjuncts where f.field == field {
            let key = IndexKey.encode(f.value)
            switch f.op {
            case .equal:
                raise(ValueBound(key: key, inclusive: true))
                drop(ValueBound(key: key, inclusive: true))
            case .in:
                let keys = f.values.map(IndexKey.encode)
                if let lo = keys.min(by: { compareKeys($0, $1) < 0 }), let hi = keys.max(by: { compareKeys($0, $1) < 0 }) {
                    raise(ValueBound(key: lo, inclusive: true))
                    drop(ValueBound(key: hi, inclusive: true))
                }
            case .lessThan, .lessThanOrEqual:
                raise(ValueBound(key: IndexKey.rangeClass(of: f.value).lower, inclusive: true, isClass: true))
                drop(ValueBound(key: key, inclusive: f.op == .lessThanOrEqual))
            case .greaterThan, .greaterThanOrEqual:
                raise(ValueBound(key: key, inclusive: f.op == .greaterThanOrEqual))
                drop(ValueBound(key: IndexKey.rangeClass(of: f.value).upper, inclusive: false, isClass: true))
            case .notIn:
                // `not-in` never matches null, the lowest value.
                raise(ValueBound(key: IndexKey.encode(.null), inclusive: false))
            default:
                break
            }
        }
        if order.first?.field == field {
            if let v = firstCursorValue(query.start) {
                let b = ValueBound(key: IndexKey.encode(v), inclusive: true)
                if direction == .ascending { raise(b) } else { drop(b) }
            }
            if let v = firstCursorValue(query.end) {
                let b = ValueBound(key: IndexKey.encode(v), inclusive: true)
                if direction == .ascending { drop(b) } else { raise(b) }
            }
        }
        return (lower, upper)
    }

    /// The best composite plan for the query, or nil when no composite index serves it. The best index is
    /// the one whose equality prefix covers the most filters.
    func compositePlan() -> QueryPlan? {
        let indexes = reader.composites.of(query.source.collectionID)
        guard !indexes.isEmpty, filterIsConjunction, let last = order.last, last.field.isDocumentName,
              !order.dropLast().contains(where: \.field.isDocumentName) else { return nil }
        let explicit = Array(order.dropLast())
        guard !explicit.isEmpty else { return nil }
        var equal: [FieldPath: Value] = [:], contains: [FieldPath: Value] = [:]
        for f in conjuncts where !f.field.isDocumentName {
            if f.op == .equal, equal[f.field] == nil { equal[f.field] = f.value }
            if f.op == .arrayContains, contains[f.field] == nil { contains[f.field] = f.value }
        }
        var best: (index: CompositeIndex, prefixLength: Int, reversed: Bool)?
        for index in indexes {
            // The longest run of leading fields fixed by the filters, then the ordering; shorter prefixes
            // too, for an ordered field that also has an equality filter.
            var fixed = 0
            while fixed < index.fields.count {
                let c = index.fields[fixed]
                guard (c.kind == .contains ? contains[c.field] : equal[c.field]) != nil else { break }
                fixed += 1
            }
            for k in stride(from: fixed, through: 0, by: -1) {
                let rest = index.fields[k...]
                guard rest.count == explicit.count, !rest.contains(where: { $0.kind == .contains }),
                      zip(rest, explicit).allSatisfy({ $0.field == $1.field }) else { continue }
                let alike = zip(rest, explicit).map { ($0.kind == .ascending) == ($1.direction == .ascending) }
                guard alike.allSatisfy({ $0 }) || alike.allSatisfy({ !$0 }) else { continue }
                if best == nil || k > best!.prefixLength { best = (index, k, !alike[0]) }
                break
            }
        }
        guard let (index, k, reversed) = best else { return nil }

        var prefix: [UInt8] = []
        var consumed: [FieldFilter] = []
        for c in index.fields[..<k] {
            let value = c.kind == .contains ? contains[c.field]! : equal[c.field]!
            IndexKey.append(value, descending: index.storedDescending(c), to: &prefix)
            consumed.append(FieldFilter(field: c.field, op: c.kind == .contains ? .arrayContains : .equal, value: value))
        }
        let component = index.fields[k]
        var scan = baseScan(index.entryField)
        scan.descending = reversed != index.flipped
        let (lo, hi) = valueRange(component.field, direction: explicit[0].direction)
        let (lower, upper) = Self.compositeBounds(prefix: prefix, lower: lo, upper: hi,
                                                  descending: index.storedDescending(component))
        scan.narrowLower(lower)
        scan.narrowUpper(upper)
        // Equality and array-contains filters the prefix does not carry are probed, as in single-field scans.
        let isConsumed = { (f: FieldFilter) in
            consumed.contains { $0.field == f.field && $0.op == f.op && Value.compare($0.value, f.value) == 0 }
        }
        scan.probes = conjuncts.filter { !isConsumed($0) }.compactMap(lookup).map { ($0.field, $0.key) }
        if scan.isEmpty { return .empty }

        var plan = QueryPlan(scans: [scan], mode: (scan.descending ? Query.Direction.descending : .ascending) == nameDirection ? .stream : .sortRuns)
        plan.exact = query.start == nil && query.end == nil && conjuncts.allSatisfy { f in
            if isConsumed(f) || lookup(f) != nil { return true }
            if f.field.isDocumentName { return Self.nameBoundIsExact(f, in: scan) }
            return f.op.isRange && f.field == component.field
        }
        return plan
    }

    /// The key range of a composite index whose leading fields are fixed to `prefix`, for value bounds on
    /// the next field. The field's key is followed by more fields' keys (or nothing), and no key starts with
    /// 0xFF, so "every key continuing `prefix + k`" ends just before `prefix + k + [0xFF]`. A descending field
    /// holds complemented keys: value bounds swap ends, whole keys map through the complement, and type-class
    /// bounds (key prefixes, lower inclusive, upper exclusive) to the complement with its last byte raised.
    static func compositeBounds(prefix: [UInt8], lower: ValueBound?, upper: ValueBound?,
                                descending: Bool) -> (IndexScan.Bound, IndexScan.Bound) {
        var low = IndexScan.Bound(key: prefix, inclusive: true)
        var high = IndexScan.Bound(key: prefix + [0xFF], inclusive: false)
        func complement(_ key: [UInt8]) -> [UInt8] { key.map { ~$0 } }
        func raised(_ key: [UInt8]) -> [UInt8] {
            var k = complement(key)
            k[k.count - 1] += 1
            return k
        }
        if !descending {
            if let lower { low = .init(key: prefix + lower.key + (lower.inclusive ? [] : [0xFF]), inclusive: true) }
            if let upper { high = .init(key: prefix + upper.key + (upper.inclusive ? [0xFF] : []), inclusive: false) }
        } else {
            if let lower {
                high = .init(key: prefix + (lower.isClass ? raised(lower.key)
                                            : complement(lower.key) + (lower.inclusive ? [0xFF] : [])), inclusive: false)
            }
            if let upper {
                low = .init(key: prefix + (upper.isClass ? raised(upper.key)
                                           : complement(upper.key) + (upper.inclusive ? [] : [0xFF])), inclusive: true)
            }
        }
        return (low, high)
    }
}
