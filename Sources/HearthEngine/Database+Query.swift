import HearthCore

/// Queries and aggregations, as the rules admit them (`perform` runs them).
extension Database {
    /// The query as it runs for an identity: its `list` decided over every document it could return, then
    /// each document cursor replaced by the values of the document it names, read only if the identity may
    /// `get` it. A denied cursor answers as any denied read does, whether or not the document exists; the
    /// store is never handed a document cursor, so nothing it reads escapes the rules.
    func admit(_ query: Query, as identity: Identity) throws -> Query {
        try authorizeQuery(query, identity)
        guard query.hasDocumentCursor else { return query }
        var documents: [DocumentPath: Document] = [:]
        for path in query.cursorDocuments {
            let stored = try storage.pointRead { try $0.document(at: path) }
            try authorizeRead(path: path, document: stored, identity: identity)
            documents[path] = try stored?.decoded()
        }
        return try query.resolvingCursors { documents[$0] }
    }
}

/// A query's answer.
public struct QueryResult: Sendable {
    /// The documents, in the query's order (projected when the query selects fields).
    public var documents: [StoredDocument]
    /// When the query read the database.
    public var readTime: Timestamp
}

/// An aggregation's answer.
public struct AggregateResult: Sendable {
    /// Each aggregation's value by alias.
    public var values: [String: Value]
    /// The aliases in request order.
    public var order: [String]
    /// When the aggregation read the database.
    public var readTime: Timestamp
}
