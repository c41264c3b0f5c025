import Foundation
import HearthCore
import NIOHTTP1

/// A filter of a query: a field compared with a value, or an `and`/`or` of filters (Firestore's `Filter`).
public struct Filter: Sendable {
    let json: JSON
    let problem: HearthClientError?

    static func field(_ field: String, _ op: String, _ value: Any) -> Filter {
        do {
            let operand = try Wire.json(any: value, at: field)
            return Filter(json: .object([("field", .string(field)), ("op", .string(op)), ("value", operand)]), problem: nil)
        } catch {
            return Filter(json: .null, problem: error)
        }
    }

    public static func whereField(_ field: String, isEqualTo value: Any) -> Filter { .field(field, "==", value) }
    public static func whereField(_ field: String, isNotEqualTo value: Any) -> Filter { .field(field, "!=", value) }
    public static func whereField(_ field: String, isLessThan value: Any) -> Filter { .field(field, "<", value) }
    public static func whereField(_ field: String, isLessThanOrEqualTo value: Any) -> Filter { .field(field, "<=", value) }
    public static func whereField(_ field: String, isGreaterThan value: Any) -> Filter { .field(field, ">", value) }
    public static func whereField(_ field: String, isGreaterThanOrEqualTo value: Any) -> Filter { .field(field, ">=", value) }
    public static func whereField(_ field: String, arrayContains value: Any) -> Filter { .field(field, "array-contains", value) }
    public static func whereField(_ field: String, arrayContainsAny values: [Any]) -> Filter { .field(field, "array-contains-any", values) }
    public static func whereField(_ field: String, in values: [Any]) -> Filter { .field(field, "in", values) }
    public static func whereField(_ field: String, notIn values: [Any]) -> Filter { .field(field, "not-in", values) }

    /// All of the filters hold.
    public static func andFilter(_ filters: [Filter]) -> Filter { combine("and", filters) }
    /// At least one of the filters holds.
    public static func orFilter(_ filters: [Filter]) -> Filter { combine("or", filters) }

    private static func combine(_ kind: String, _ filters: [Filter]) -> Filter {
        Filter(json: .object([(kind, .array(filters.map(\.json)))]), problem: filters.lazy.compactMap(\.problem).first)
    }
}

/// A query of a collection or a collection group (docs/api.md, Queries): built by chaining, run by
/// `getDocuments`, aggregated by `count` and `aggregate`, listened to by `snapshots`.
public struct Query: Sendable, QueryBuilding {
    enum Source: Sendable {
        case collection(String)
        case group(String, under: String?)
    }

    let hearth: Hearth
    let source: Source
    var filters: [JSON] = []
    var orders: [JSON] = []
    var limit: Int?
    var limitToLast: Int?
    var offset: Int?
    var fields: [String]?
    var cursors: [(String, JSON)] = []
    /// A value given to a builder that has no Hearth value: reported when the query runs.
    var problem: HearthClientError?

    init(hearth: Hearth, source: Source) {
        self.hearth = hearth
        self.source = source
    }

    public var query: Query { self }

    /// The query in the format of `POST /v1/query`.
    var json: JSON {
        var pairs: [(String, JSON)] = []
        switch source {
        case .collection(let path): pairs.append(("from", .string(path)))
        case .group(let id, let under):
            var from: [(String, JSON)] = [("collectionGroup", .string(id))]
            if let under { from.append(("under", .string(under))) }
            pairs.append(("from", .object(from)))
        }
        if !filters.isEmpty { pairs.append(("where", filters.count == 1 ? filters[0] : .object([("and", .array(filters))]))) }
        if !orders.isEmpty { pairs.append(("orderBy", .array(orders))) }
        pairs += cursors
        if let limit { pairs.append(("limit", .int(Int64(limit)))) }
        if let limitToLast { pairs.append(("limitToLast", .int(Int64(limitToLast)))) }
        if let offset { pairs.append(("offset", .int(Int64(offset)))) }
        if let fields { pairs.append(("select", .array(fields.map { .string($0) }))) }
        return .object(pairs)
    }

    func checked() throws(HearthClientError) -> JSON {
        if let problem { throw problem }
        return json
    }

    /// Runs the query (`POST /v1/query`).
    public func getDocuments() async throws(HearthClientError) -> QuerySnapshot {
        try await getDocuments(transaction: nil)
    }

    func getDocuments(transaction: String?) async throws(HearthClientError) -> QuerySnapshot {
        var body = try checked()
        if let transaction, case .object(let pairs) = body { body = .object(pairs + [("transaction", .string(transaction))]) }
        let answer = try await hearth.call(.POST, "/v1/query", body: body)
        guard case .array(let items)? = answer.body?["documents"] else { throw .decoding("the query's answer lacks its documents") }
        var documents: [DocumentSnapshot] = []
        for item in items { documents.append(try DocumentSnapshot(hearth: hearth, json: item)) }
        let changes = documents.enumerated().map { DocumentChange(type: .added, document: $1, oldIndex: -1, newIndex: $0) }
        return QuerySnapshot(documents: documents, documentChanges: changes,
                             readTime: answer.body?["readTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)), isReset: false)
    }

    /// Live snapshots of the query's result: the whole result first, then one per change, each with its
    /// `documentChanges`; reconnects and resumes by itself (docs/client.md, Live updates).
    public func snapshots() -> AsyncThrowingStream<QuerySnapshot, any Error> {
        let target: JSON
        do { target = .object([("query", try checked())]) } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        return Listener.stream(hearth: hearth, target: target) { $0 }
    }
}

/// The builders shared by `Query` and `CollectionReference` (a collection is the query of all its documents).
public protocol QueryBuilding: Sendable {
    var query: Query { get }
}

extension QueryBuilding {
    public func whereFilter(_ filter: Filter) -> Query {
        var q = query
        q.filters.append(filter.json)
        q.problem = q.problem ?? filter.problem
        return q
    }

    public func whereField(_ field: String, isEqualTo value: Any) -> Query { whereFilter(.whereField(field, isEqualTo: value)) }
    public func whereField(_ field: String, isNotEqualTo value: Any) -> Query { whereFilter(.whereField(field, isNotEqualTo: value)) }
    public func whereField(_ field: String, isLessThan value: Any) -> Query { whereFilter(.whereField(field, isLessThan: value)) }
    public func whereField(_ field: String, isLessThanOrEqualTo value: Any) -> Query {
        whereFilter(.whereField(field, isLessThanOrEqualTo: value))
    }
    public func whereField(_ field: String, isGreaterThan value: Any) -> Query { whereFilter(.whereField(field, isGreaterThan: value)) }
    public func whereField(_ field: String, isGreaterThanOrEqualTo value: Any) -> Query {
        whereFilter(.whereField(field, isGreaterThanOrEqualTo: value))
    }
    public func whereField(_ field: String, arrayContains value: Any) -> Query { whereFilter(.whereField(field, arrayContains: value)) }
    public func whereField(_ field: String, arrayContainsAny values: [Any]) -> Query {
        whereFilter(.whereField(field, arrayContainsAny: values))
    }
    public func whereField(_ field: String, in values: [Any]) -> Query { whereFilter(.whereField(field, in: values)) }
    public func whereField(_ field: String, notIn values: [Any]) -> Query { whereFilter(.whereField(field, notIn: values)) }

    /// Runs the query (`POST /v1/query`).
    public func getDocuments() async throws(HearthClientError) -> QuerySnapshot { try await query.getDocuments() }

    /// Live snapshots of the query's result (see `Query.snapshots()`).
    public func snapshots() -> AsyncThrowingStream<QuerySnapshot, any Error> { query.snapshots() }

    /// Orders by a field (`__name__` for the document's path).
    public func order(by field: String, descending: Bool = false) -> Query {
        var q = query
        q.orders.append(.object([("field", .string(field)), ("direction", .string(descending ? "desc" : "asc"))]))
        return q
    }

    /// At most `n` documents, from the start of the order.
    public func limit(to n: Int) -> Query {
        var q = query
        q.limit = n
        return q
    }

    /// The last `n` documents of the order (needs an `order(by:)`), still returned in the query's order.
    public func limit(toLast n: Int) -> Query {
        var q = query
        q.limitToLast = n
        return q
    }

    /// Skips the first `n` results.
    public func offset(_ n: Int) -> Query {
        var q = query
        q.offset = n
        return q
    }

    /// Only these fields in the documents returned.
    public func select(_ fields: [String]) -> Query {
        var q = query
        q.fields = fields
        return q
    }

    public func start(at values: [Any]) -> Query { cursor("startAt", values) }
    public func start(after values: [Any]) -> Query { cursor("startAfter", values) }
    public func end(at values: [Any]) -> Query { cursor("endAt", values) }
    public func end(before values: [Any]) -> Query { cursor("endBefore", values) }
    /// Cursors at a document: its values for the whole order (the document must be one the query could return).
    public func start(atDocument document: DocumentSnapshot) -> Query { cursor("startAt", document.reference.path) }
    public func start(afterDocument document: DocumentSnapshot) -> Query { cursor("startAfter", document.reference.path) }
    public func end(atDocument document: DocumentSnapshot) -> Query { cursor("endAt", document.reference.path) }
    public func end(beforeDocument document: DocumentSnapshot) -> Query { cursor("endBefore", document.reference.path) }

    private func cursor(_ name: String, _ values: [Any]) -> Query {
        var q = query
        do {
            q.cursors.removeAll { $0.0 == name }
            q.cursors.append((name, try Wire.json(any: values, at: name)))
        } catch {
            q.problem = q.problem ?? error
        }
        return q
    }

    private func cursor(_ name: String, _ path: String) -> Query {
        var q = query
        q.cursors.removeAll { $0.0 == name }
        q.cursors.append((name, .string(path)))
        return q
    }

    /// The number of results (`POST /v1/aggregate` with `count`).
    public var count: AggregateQuery { AggregateQuery(query: query, fields: [.count()]) }

    /// Aggregations of the results: `count`, `sum` and `average` of fields (at most 5).
    public func aggregate(_ fields: [AggregateField]) -> AggregateQuery { AggregateQuery(query: query, fields: fields) }
}

/// An aggregation of a query's results.
public struct AggregateField: Sendable, Hashable {
    let json: JSON
    let key: String

    /// The number of results, counting at most `upTo` when given.
    public static func count(upTo: Int? = nil) -> AggregateField {
        AggregateField(json: .object([("count", upTo.map { .object([("upTo", .int(Int64($0)))]) } ?? .object([]))]), key: "count")
    }
    /// The sum of a numeric field (an integer while every value is one and it fits).
    public static func sum(_ field: String) -> AggregateField { AggregateField(json: .object([("sum", .string(field))]), key: "sum:" + field) }
    /// The mean of a numeric field (nil when no result has a number there).
    public static func average(_ field: String) -> AggregateField { AggregateField(json: .object([("avg", .string(field))]), key: "avg:" + field) }

    public static func == (a: AggregateField, b: AggregateField) -> Bool { a.key == b.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

/// A query's aggregations, run by `getAggregation`.
public struct AggregateQuery: Sendable {
    public let query: Query
    public let fields: [AggregateField]

    /// Runs the aggregations (`POST /v1/aggregate`).
    public func getAggregation() async throws(HearthClientError) -> AggregateQuerySnapshot {
        var aggregations: [(String, JSON)] = []
        for (k, field) in fields.enumerated() { aggregations.append(("a\(k)", field.json)) }
        let body = JSON.object([("query", try query.checked()), ("aggregations", .object(aggregations))])
        let answer = try await query.hearth.call(.POST, "/v1/aggregate", body: body)
        guard let result = answer.body?["result"] else { throw .decoding("the aggregation's answer lacks its result") }
        var values: [String: Value] = [:]
        for (k, field) in fields.enumerated() {
            guard let item = result["a\(k)"] else { continue }
            do { values[field.key] = try Value(wire: item) } catch { throw .decoding("aggregation \(field.key): \(error.message)") }
        }
        return AggregateQuerySnapshot(values: values, readTime: answer.body?["readTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)))
    }
}

/// The results of an aggregation.
public struct AggregateQuerySnapshot: Sendable {
    let values: [String: Value]
    public let readTime: Timestamp?

    /// The count, when one was asked for.
    public var count: Int? {
        if case .int(let n)? = values["count"] { return Int(n) }
        return nil
    }

    /// An aggregation's value (`.null` for the average of no numbers).
    public func get(_ field: AggregateField) -> Value? { values[field.key] }
}
