import HearthCore
import HearthFirestoreProtos
import SwiftProtobuf

/// Firestore's `StructuredQuery` and `StructuredAggregationQuery` as Hearth's queries. The query is checked
/// with Firestore's rules (`Query.validate`); vector search (`find_nearest`) is refused before it gets here
/// (`FirestoreService.checkServed`).
extension FirestoreDatabase {
    /// The query under `parent` (the documents root or a document).
    func query(_ proto: Google_Firestore_V1_StructuredQuery, parent: String) throws(HearthError) -> Query {
        let parentDocument = try parentDocument(parent)
        guard proto.from.count == 1, let from = proto.from.first else {
            throw .invalidArgument("Invalid query. A query selects exactly one collection, got \(proto.from.count)")
        }
        let source: Query.Source
        if from.allDescendants {
            source = .collectionGroup(id: from.collectionID, under: parentDocument)
        } else {
            do { try validateID(from.collectionID, kind: "collection id") } catch {
                throw .invalidArgument("Invalid query. \(error.message)")
            }
            source = .collection(CollectionPath(uncheckedSegments: (parentDocument?.segments ?? []) + [from.collectionID]))
        }
        var query = Query(source: source)
        if proto.hasWhere { query.filter = try filter(proto.where) }
        query.orderBy = try proto.orderBy.map { order throws(HearthError) in
            let direction: Query.Direction
            switch order.direction {
            case .unspecified, .ascending: direction = .ascending
            case .descending: direction = .descending
            case .UNRECOGNIZED(let n): throw .invalidArgument("Invalid query. Unknown direction \(n)")
            }
            return Query.Order(try Self.field(order.field), direction)
        }
        if proto.hasStartAt { query.start = try cursor(proto.startAt, inclusive: proto.startAt.before, "start_at") }
        if proto.hasEndAt { query.end = try cursor(proto.endAt, inclusive: !proto.endAt.before, "end_at") }
        guard proto.offset >= 0 else { throw .invalidArgument("Invalid query. offset must be non-negative, got \(proto.offset)") }
        query.offset = Int(proto.offset)
        if proto.hasLimit {
            guard proto.limit.value >= 0 else { throw .invalidArgument("Invalid query. limit must be non-negative, got \(proto.limit.value)") }
            query.limit = Int(proto.limit.value)
        }
        if proto.hasSelect { query.select = try proto.select.fields.map { f throws(HearthError) in try Self.field(f) } }
        if !prefix.isEmpty { storedNames(&query) }
        try query.validate()
        return query
    }

    /// In a named database, the `__name__` values of the filters and cursors as stored paths.
    func storedNames(_ query: inout Query) {
        func fix(_ filter: Filter) -> Filter {
            switch filter {
            case .field(var f):
                if f.field.isDocumentName {
                    f.value = f.op.takesList ? .array(f.values.map(stored)) : stored(f.value)
                }
                return .field(f)
            case .and(let items): return .and(items.map(fix))
            case .or(let items): return .or(items.map(fix))
            }
        }
        query.filter = query.filter.map(fix)
        let order = query.normalizedOrder
        for keyPath in [\Query.start, \Query.end] {
            guard var cursor = query[keyPath: keyPath], case .values(var values) = cursor.position else { continue }
            for k in values.indices where k < order.count && order[k].field.isDocumentName {
                values[k] = stored(values[k])
            }
            cursor.position = .values(values)
            query[keyPath: keyPath] = cursor
        }
    }

    static func field(_ proto: Google_Firestore_V1_StructuredQuery.FieldReference) throws(HearthError) -> FieldPath {
        do { return try FieldPath(parsing: proto.fieldPath) } catch {
            throw .invalidArgument("Invalid query. Field path '\(proto.fieldPath.prefix(200))': \(error.message)")
        }
    }

    func cursor(_ proto: Google_Firestore_V1_Cursor, inclusive: Bool, _ place: String) throws(HearthError) -> Query.Cursor {
        let values = try proto.values.enumerated().map { k, v throws(HearthError) in try value(v, field: "\(place)[\(k)]") }
        return Query.Cursor(.values(values), inclusive: inclusive)
    }

    func filter(_ proto: Google_Firestore_V1_StructuredQuery.Filter) throws(HearthError) -> Filter {
        switch proto.filterType {
        case nil:
            throw .invalidArgument("Invalid query. A filter needs a composite, field or unary filter")
        case .compositeFilter(let composite)?:
            let items = try composite.filters.map { f throws(HearthError) in try filter(f) }
            switch composite.op {
            case .and: return .and(items)
            case .or: return .or(items)
            case .unspecified, .UNRECOGNIZED:
                throw .invalidArgument("Invalid query. A composite filter's operator must be AND or OR")
            }
        case .fieldFilter(let f)?:
            let field = try Self.field(f.field)
            let op: FilterOperator
            switch f.op {
            case .lessThan: op = .lessThan
            case .lessThanOrEqual: op = .lessThanOrEqual
            case .greaterThan: op = .greaterThan
            case .greaterThanOrEqual: op = .greaterThanOrEqual
            case .equal: op = .equal
            case .notEqual: op = .notEqual
            case .arrayContains: op = .arrayContains
            case .in: op = .in
            case .arrayContainsAny: op = .arrayContainsAny
            case .notIn: op = .notIn
            case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Invalid query. Unknown field filter operator on '\(field)'")
            }
            return .field(FieldFilter(field: field, op: op, value: try value(f.value, field: "filter on \(field)")))
        case .unaryFilter(let u)?:
            guard case .field(let reference)? = u.operandType else {
                throw .invalidArgument("Invalid query. A unary filter needs a field")
            }
            let field = try Self.field(reference)
            switch u.op {
            case .isNull: return .field(FieldFilter(field: field, op: .equal, value: .null))
            case .isNan: return .field(FieldFilter(field: field, op: .equal, value: .double(.nan)))
            case .isNotNull: return .field(FieldFilter(field: field, op: .notEqual, value: .null))
            // Firestore's IS_NOT_NAN matches the numbers that are not NaN (not null, not other types): every
            // number from -Infinity up, NaN sorting below it.
            case .isNotNan: return .field(FieldFilter(field: field, op: .greaterThanOrEqual, value: .double(-.infinity)))
            case .unspecified, .UNRECOGNIZED: throw .invalidArgument("Invalid query. Unknown unary filter operator on '\(field)'")
            }
        }
    }

    func aggregate(_ proto: Google_Firestore_V1_StructuredAggregationQuery, parent: String) throws(HearthError) -> AggregateQuery {
        guard case .structuredQuery(let structured)? = proto.queryType else {
            throw .invalidArgument("Invalid aggregation query. structured_query is required")
        }
        var query = try query(structured, parent: parent)
        query.select = nil
        // Firestore's own wording for these two mistakes, which clients match on.
        if proto.aggregations.isEmpty { throw .invalidArgument("Aggregations can not be empty.") }
        let aliases = proto.aggregations.map(\.alias).filter { !$0.isEmpty }
        if Set(aliases).count != aliases.count {
            throw .invalidArgument("Aggregation aliases contain duplicate alias.")
        }
        var named: [AggregateQuery.Named] = []
        for (k, a) in proto.aggregations.enumerated() {
            // Firestore names an aggregation without an alias field_<n>.
            let alias = a.alias.isEmpty ? "field_\(k + 1)" : a.alias
            switch a.operator {
            case nil:
                throw .invalidArgument("Invalid aggregation query. Aggregation '\(alias)' names no operator")
            case .count(let count)?:
                named.append(.init(alias, .count(upTo: count.hasUpTo ? Int(clamping: count.upTo.value) : nil)))
            case .sum(let sum)?:
                named.append(.init(alias, .sum(try Self.field(sum.field))))
            case .avg(let avg)?:
                named.append(.init(alias, .avg(try Self.field(avg.field))))
            }
        }
        // A limited sum or average over one field, with no order asked, reads that field's index in Firestore,
        // so the documents it aggregates are the first by that field's value (and those that have the field).
        let fields = Set(named.compactMap { a -> FieldPath? in
            switch a.aggregation {
            case .sum(let f), .avg(let f): return f
            case .count: return nil
            }
        })
        let onlyThatField = named.allSatisfy { if case .count = $0.aggregation { false } else { true } }
        if fields.count == 1, let field = fields.first, onlyThatField, query.limit != nil, structured.orderBy.isEmpty,
           !structured.hasStartAt, !structured.hasEndAt, query.inequalityFields.isEmpty {
            query.orderBy = [Query.Order(field)]
        }
        let aggregate = AggregateQuery(query: query, aggregations: named)
        try aggregate.validate()
        return aggregate
    }
}
