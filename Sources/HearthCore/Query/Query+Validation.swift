/// Firestore's rules for valid queries. Every failure is `invalid-argument` with Firestore's reason.
extension Query {
    /// Checks the query against Firestore's rules; `init(json:)` calls it.
    public func validate() throws(HearthError) {
        if case .collectionGroup(let id, _) = source {
            do { try validateID(id, kind: "collection group id") } catch { throw .invalidArgument("Invalid query. \(error.message)") }
        }
        if let filter { try Query.validateFilter(filter, source: source) }
        try validateOrderBy()
        try validateLimits()
        try validateCursor(start, name: start?.inclusive == false ? "startAfter" : "startAt")
        try validateCursor(end, name: end?.inclusive == false ? "endBefore" : "endAt")
        let components = (filter?.fieldFilters.count ?? 0) + orderBy.count + source.parentDepth
        if components > Limits.maxQueryComponents {
            throw .invalidArgument(
                "Invalid query. The query has \(components) filters, orderings and parent path components together; "
                    + "the limit is \(Limits.maxQueryComponents)")
        }
    }

    // MARK: filters

    static func validateFilter(_ filter: Filter, source: Source) throws(HearthError) {
        try validateShape(filter)
        let leaves = filter.fieldFilters
        for leaf in leaves { try validateFieldFilter(leaf, source: source) }

        // Operators that may not appear together anywhere in the query.
        let notEqual = leaves.filter { $0.op == .notEqual }.count
        let notIn = leaves.filter { $0.op == .notIn }.count
        if notEqual > 1 { throw .invalidArgument("Invalid query. You cannot use more than one '!=' filter.") }
        if notIn > 1 { throw .invalidArgument("Invalid query. You cannot use more than one 'not-in' filter.") }
        if notIn > 0 {
            for op in [FilterOperator.notEqual, .in, .arrayContainsAny] where leaves.contains(where: { $0.op == op }) {
                throw .invalidArgument("Invalid query. You cannot use 'not-in' filters with '\(op.rawValue)' filters.")
            }
            if filter.hasDisjunction {
                throw .invalidArgument("Invalid query. You cannot use 'not-in' filters with 'or' filters.")
            }
        }

        let inequalities = Set(leaves.filter { $0.op.isInequality }.map(\.field))
        if inequalities.count > Limits.maxInequalityFields {
            throw .invalidArgument(
                "Invalid query. The query has range or inequality filters on \(inequalities.count) fields; "
                    + "the limit is \(Limits.maxInequalityFields)")
        }

        let disjunctions = disjunctionCount(filter)
        if disjunctions > Limits.maxDisjunctions {
            throw .invalidArgument(
                "Invalid query. The filter has \(disjunctions == Int.max ? "too many" : String(disjunctions)) disjunctions in "
                    + "disjunctive normal form; the limit is \(Limits.maxDisjunctions). Each value of an 'in' or "
                    + "'array-contains-any' filter counts as one disjunction.")
        }
        for term in disjunctiveTerms(filter) {
            let contains = term.filter { $0.op == .arrayContains }.count
            let containsAny = term.filter { $0.op == .arrayContainsAny }.count
            if contains > 1 {
                throw .invalidArgument("Invalid query. You cannot use more than one 'array-contains' filter in the same disjunction.")
            }
            if containsAny > 1 {
                throw .invalidArgument("Invalid query. You cannot use more than one 'array-contains-any' filter in the same disjunction.")
            }
            if contains > 0 && containsAny > 0 {
                throw .invalidArgument(
                    "Invalid query. You cannot use 'array-contains' filters with 'array-contains-any' filters in the same disjunction.")
            }
        }
    }

    static func validateShape(_ filter: Filter) throws(HearthError) {
        switch filter {
        case .field: return
        case .and(let items), .or(let items):
            if items.isEmpty {
                let kind: String
                if case .and = filter { kind = "and" } else { kind = "or" }
                throw .invalidArgument("Invalid query. An '\(kind)' filter must hold at least one filter.")
            }
            for item in items { try validateShape(item) }
        }
    }

    static func validateFieldFilter(_ f: FieldFilter, source: Source) throws(HearthError) {
        if f.op.takesList {
            guard case .array(let items) = f.value, !items.isEmpty else {
                throw .invalidArgument("Invalid query. A non-empty array is required for '\(f.op.rawValue)' filters.")
            }
            let max = f.op == .notIn ? Limits.maxNotInValues : Limits.maxInValues
            if items.count > max {
                throw .invalidArgument(
                    "Invalid query. '\(f.op.rawValue)' filters support a maximum of \(max) elements in the value array "
                        + "(field '\(f.field)' has \(items.count)).")
            }
        }
        if f.op.isRange {
            if case .null = f.value {
                throw .invalidArgument("Invalid query. Null only supports '==' and '!=' comparisons (field '\(f.field)').")
            }
            if f.value.isNaN {
                throw .invalidArgument("Invalid query. NaN only supports '==' and '!=' comparisons (field '\(f.field)').")
            }
        }
        if f.field.isDocumentName {
            if f.op == .arrayContains || f.op == .arrayContainsAny {
                throw .invalidArgument("Invalid query. You can't perform '\(f.op.rawValue)' queries on __name__.")
            }
            let operands = f.op.takesList ? f.values : [f.value]
            for v in operands {
                guard case .reference = v else {
                    throw .invalidArgument(
                        "Invalid query. When querying with __name__, you must provide a document path, but it was: \(v.typeName).")
                }
            }
        }
    }

    /// The number of disjunctions in disjunctive normal form, where each value of `in` and
    /// `array-contains-any` is one disjunction; saturates at `Int.max`.
    public static func disjunctionCount(_ filter: Filter) -> Int {
        switch filter {
        case .field(let f):
            return f.op == .in || f.op == .arrayContainsAny ? max(1, f.values.count) : 1
        case .and(let items):
            var product = 1
            for item in items {
                let (p, overflow) = product.multipliedReportingOverflow(by: disjunctionCount(item))
                product = overflow ? Int.max : p
            }
            return product
        case .or(let items):
            var sum = 0
            for item in items {
                let (s, overflow) = sum.addingReportingOverflow(disjunctionCount(item))
                sum = overflow ? Int.max : s
            }
            return sum
        }
    }

    /// The filter's terms in disjunctive normal form, with list operators kept whole. Only called once the
    /// disjunction count is known to be small, which bounds the expansion.
    static func disjunctiveTerms(_ filter: Filter) -> [[FieldFilter]] {
        switch filter {
        case .field(let f):
            return [[f]]
        case .or(let items):
            return items.flatMap { disjunctiveTerms($0) }
        case .and(let items):
            var terms: [[FieldFilter]] = [[]]
            for item in items {
                let sub = disjunctiveTerms(item)
                terms = terms.flatMap { t in sub.map { t + $0 } }
            }
            return terms
        }
    }

    // MARK: order, limits, cursors

    func validateOrderBy() throws(HearthError) {
        var seen = Set<FieldPath>()
        for o in orderBy where !seen.insert(o.field).inserted {
            throw .invalidArgument("Invalid query. orderBy names the field '\(o.field)' more than once.")
        }
    }

    func validateLimits() throws(HearthError) {
        if let limit, limit <= 0 {
            throw .invalidArgument("Invalid query. limit must be a positive number, but it was: \(limit).")
        }
        if let limitToLast, limitToLast <= 0 {
            throw .invalidArgument("Invalid query. limitToLast must be a positive number, but it was: \(limitToLast).")
        }
        if limit != nil && limitToLast != nil {
            throw .invalidArgument("Invalid query. 'limit' and 'limitToLast' cannot both be given.")
        }
        if limitToLast != nil && orderBy.isEmpty {
            throw .invalidArgument("Invalid query. limitToLast queries require specifying at least one orderBy clause.")
        }
        if offset < 0 {
            throw .invalidArgument("Invalid query. offset must be zero or a positive number, but it was: \(offset).")
        }
    }

    func validateCursor(_ cursor: Cursor?, name: String) throws(HearthError) {
        if case .document(let path)? = cursor?.position {
            // Firestore's clients refuse a snapshot from elsewhere as a bound; here it also keeps the cursor
            // from reading a document the query could never return.
            guard contains(path: path) else {
                throw .invalidArgument(
                    "Invalid query. The \(name) cursor document '\(path)' is not part of the query's result set and "
                        + "cannot be used as a query boundary.")
            }
            return
        }
        guard case .values(let values)? = cursor?.position else { return }
        if values.isEmpty {
            throw .invalidArgument("Invalid query. \(name) requires at least one value.")
        }
        let order = normalizedOrder
        if values.count > order.count {
            throw .invalidArgument(
                "Invalid query. Too many arguments provided to \(name): \(values.count) values, but the query is ordered by "
                    + "only \(order.count) field(s). The number of values must be less than or equal to the number of orderings.")
        }
        for (k, v) in values.enumerated() where order[k].field.isDocumentName {
            guard case .reference = v else {
                throw .invalidArgument(
                    "Invalid query. \(name)[\(k)] is the __name__ position and must be a document path, but it was: \(v.typeName).")
            }
        }
    }
}
