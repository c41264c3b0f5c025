/// An aggregation query: `count` (optionally `upTo`), `sum` and `avg` over a query's results, with
/// Firestore's typing rules.
public struct AggregateQuery: Sendable, Equatable {
    /// One aggregation.
    public enum Aggregation: Sendable, Equatable {
        /// The number of results, capped at `upTo` when given.
        case count(upTo: Int?)
        /// The sum of a field's numeric values: an integer while every value is one and the sum fits in 64 bits,
        /// a double otherwise; non-numeric values are ignored; 0 when there are none.
        case sum(FieldPath)
        /// The mean of a field's numeric values as a double; null when there are none.
        case avg(FieldPath)
    }

    /// An aggregation under the name its result is returned as.
    public struct Named: Sendable, Equatable {
        /// The result's name.
        public var alias: String
        /// The aggregation.
        public var aggregation: Aggregation

        /// Makes a named aggregation.
        public init(_ alias: String, _ aggregation: Aggregation) {
            self.alias = alias
            self.aggregation = aggregation
        }
    }

    /// The query whose results are aggregated (its `select` is ignored).
    public var query: Query
    /// The aggregations, in request order.
    public var aggregations: [Named]

    /// Makes an aggregation query; call `validate()` before running one built in code.
    public init(query: Query, aggregations: [Named]) {
        self.query = query
        self.aggregations = aggregations
    }

    /// Reads `{"query": ..., "aggregations": {"n": {"count": {"upTo"?: n}}, "s": {"sum": "f"}, "a": {"avg": "f"}}}`.
    public init(json: JSON) throws(HearthError) {
        let pairs = try QueryJSON.object(json, "aggregation query")
        try QueryJSON.checkKeys(pairs, allowed: ["query", "aggregations"], in: "aggregation query")
        guard let q = json["query"] else { throw .invalidArgument("Invalid aggregation query. 'query' is required") }
        guard case .object(let items)? = json["aggregations"] else {
            throw .invalidArgument("Invalid aggregation query. 'aggregations' must be an object of named aggregations")
        }
        var named: [Named] = []
        for (alias, body) in items {
            named.append(Named(alias, try AggregateQuery.parseAggregation(body, at: "aggregations.\(alias)")))
        }
        self.init(query: try Query(json: q), aggregations: named)
        try validate()
    }

    static func parseAggregation(_ json: JSON, at place: String) throws(HearthError) -> Aggregation {
        guard case .object(let pairs) = json, pairs.count == 1 else {
            throw .invalidArgument(
                "Invalid aggregation query. \(place) must be one of {\"count\": {}}, {\"sum\": field}, {\"avg\": field}")
        }
        let (kind, body) = pairs[0]
        switch kind {
        case "count":
            switch body {
            case .null: return .count(upTo: nil)
            case .object(let options):
                try QueryJSON.checkKeys(options, allowed: ["upTo"], in: "\(place).count")
                switch body["upTo"] {
                case nil, .null?: return .count(upTo: nil)
                case .int(let n)?: return .count(upTo: Int(n))
                default: throw .invalidArgument("Invalid aggregation query. \(place).count.upTo must be an integer")
                }
            default:
                throw .invalidArgument("Invalid aggregation query. \(place).count must be an object ({} or {\"upTo\": n})")
            }
        case "sum", "avg":
            var text: String?
            switch body {
            case .string(let s): text = s
            case .object(let options):
                try QueryJSON.checkKeys(options, allowed: ["field"], in: "\(place).\(kind)")
                text = body["field"]?.stringValue
            default: break
            }
            guard let text else {
                throw .invalidArgument("Invalid aggregation query. \(place).\(kind) must be a field path string")
            }
            let field = try Query.parseFieldPath(text, at: "\(place).\(kind)")
            return kind == "sum" ? .sum(field) : .avg(field)
        default:
            throw .invalidArgument(
                "Invalid aggregation query. Unknown aggregation '\(kind)' at \(place); use count, sum or avg")
        }
    }

    /// Checks the aggregations (and the query) against Firestore's rules.
    public func validate() throws(HearthError) {
        try query.validate()
        if aggregations.isEmpty {
            throw .invalidArgument("Invalid aggregation query. At least one aggregation is required.")
        }
        if aggregations.count > Limits.maxAggregations {
            throw .invalidArgument(
                "Invalid aggregation query. \(aggregations.count) aggregations were asked for; the limit is \(Limits.maxAggregations).")
        }
        var seen = Set<String>()
        for a in aggregations {
            do { try validateFieldName(a.alias, at: a.alias) } catch {
                throw .invalidArgument("Invalid aggregation query. Alias: \(error.message)")
            }
            guard seen.insert(a.alias).inserted else {
                throw .invalidArgument("Invalid aggregation query. The alias '\(a.alias)' is used more than once.")
            }
            switch a.aggregation {
            case .count(let upTo?) where upTo < 1:
                throw .invalidArgument("Invalid aggregation query. count upTo must be greater than zero, but it was: \(upTo).")
            case .sum(let f) where f.isDocumentName, .avg(let f) where f.isDocumentName:
                throw .invalidArgument("Invalid aggregation query. Cannot sum or average __name__.")
            default: break
            }
        }
    }

    /// The reference computation: runs the query over the documents and aggregates its results.
    public func compute(over docs: [Document]) throws(HearthError) -> [String: Value] {
        var q = query
        q.select = nil
        let results = try q.run(over: docs)
        var out: [String: Value] = [:]
        for a in aggregations { out[a.alias] = AggregateQuery.aggregate(a.aggregation, results) }
        return out
    }

    /// One aggregation over already-selected documents.
    public static func aggregate(_ aggregation: Aggregation, _ docs: [Document]) -> Value {
        switch aggregation {
        case .count(let upTo):
            return .int(Int64(upTo.map { min($0, docs.count) } ?? docs.count))
        case .sum(let field):
            let s = NumericSum(docs.compactMap { $0.fields[path: field] })
            return s.sum
        case .avg(let field):
            let s = NumericSum(docs.compactMap { $0.fields[path: field] })
            return s.average
        }
    }
}

/// Sums numbers with Firestore's typing: exact 128-bit integer arithmetic while every value is an integer,
/// doubles once a double appears; non-numbers are skipped.
struct NumericSum {
    /// The integer sum as a 128-bit two's-complement value.
    var high: Int64 = 0
    var low: UInt64 = 0
    /// The sum of every numeric value as a double, in order (used once any double is present).
    var doubleSum: Double = 0
    var count = 0
    var sawDouble = false

    init(_ values: [Value]) {
        for v in values {
            switch v {
            case .int(let i):
                let (l, carry) = low.addingReportingOverflow(UInt64(bitPattern: i))
                high = high &+ (i < 0 ? -1 : 0) &+ (carry ? 1 : 0)
                low = l
                doubleSum += Double(i)
                count += 1
            case .double(let d):
                sawDouble = true
                doubleSum += d
                count += 1
            default:
                continue
            }
        }
    }

    /// The integer sum when it fits in 64 bits.
    var exactInt: Int64? {
        let fits = high == (Int64(bitPattern: low) < 0 ? -1 : 0)
        return fits ? Int64(bitPattern: low) : nil
    }

    /// The integer sum as a double (for sums past 64 bits).
    var integerSumAsDouble: Double {
        if let i = exactInt { return Double(i) }
        return Double(high) * 18_446_744_073_709_551_616.0 + Double(low)
    }

    var sum: Value {
        if sawDouble { return .double(doubleSum) }
        if let i = exactInt { return .int(i) }
        return .double(integerSumAsDouble)
    }

    var average: Value {
        guard count > 0 else { return .null }
        return .double((sawDouble ? doubleSum : integerSumAsDouble) / Double(count))
    }
}
