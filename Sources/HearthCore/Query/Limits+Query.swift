extension Limits {
    /// Most disjunctions a query's filter may have in disjunctive normal form (Firestore's 30).
    public static let maxDisjunctions = 30
    /// Most values in an `in` or `array-contains-any` filter.
    public static let maxInValues = 30
    /// Most values in a `not-in` filter (Firestore allows 10).
    public static let maxNotInValues = 10
    /// Most distinct fields with range or inequality filters in one query.
    public static let maxInequalityFields = 10
    /// Most filters, orderings and parent-path components together in one query.
    public static let maxQueryComponents = 100
    /// Most aggregations in one aggregation query.
    public static let maxAggregations = 5
}
