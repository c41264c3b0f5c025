import HearthCore
import HearthStore

/// Queries and aggregations, served from the field index.
extension Database {
    /// Runs a query for an identity. Under a transaction, every returned document's version is recorded as a
    /// read, so the commit aborts if one changes.
    public func runQuery(_ query: Query, as identity: Identity, transaction: String? = nil) async throws -> QueryResult {
        if let transaction { try transactions.touch(transaction, identity: identity) }
        let query = try admit(query, as: identity)
        let readTime = Timestamp.now()
        let documents = try await store.read { try $0.runQuery(query) }
        if let transaction {
            for doc in documents {
                try transactions.recordRead(transaction, identity: identity, path: doc.path, version: doc.updateTime)
            }
        }
        return QueryResult(documents: documents, readTime: readTime)
    }

    /// Runs a query outside a transaction on the calling thread, when SQLite needs at most about `instructions`
    /// virtual-machine instructions for it; nil when it needs more, and the caller should run it with
    /// `runQuery` (on a reader thread) instead. The rules decide first, exactly as for `runQuery`.
    public func queryNow(_ query: Query, as identity: Identity, instructions: Int) throws -> QueryResult? {
        let query = try admit(query, as: identity)
        let readTime = Timestamp.now()
        do {
            let documents = try store.boundedRead(instructions: instructions) { try $0.runQuery(query) }
            return QueryResult(documents: documents, readTime: readTime)
        } catch is ReadBudgetExceeded {
            return nil
        }
    }

    /// Runs an aggregation for an identity. Under a transaction, every aggregated document's version is
    /// recorded as a read.
    public func runAggregate(_ aggregate: AggregateQuery, as identity: Identity,
                             transaction: String? = nil) async throws -> AggregateResult {
        if let transaction { try transactions.touch(transaction, identity: identity) }
        var admitted = aggregate
        admitted.query = try admit(aggregate.query, as: identity)
        let aggregate = admitted
        let readTime = Timestamp.now()
        let recording = transaction != nil
        let (result, documents) = try await store.read { try $0.runAggregate(aggregate, returningDocuments: recording) }
        if let transaction {
            for doc in documents {
                try transactions.recordRead(transaction, identity: identity, path: doc.path, version: doc.updateTime)
            }
        }
        return AggregateResult(values: result, order: aggregate.aggregations.map(\.alias), readTime: readTime)
    }

    /// The query as it runs for an identity: its `list` decided over every document it could return, then
    /// each document cursor replaced by the values of the document it names, read only if the identity may
    /// `get` it. A denied cursor answers as any denied read does, whether or not the document exists; the
    /// store is never handed a document cursor, so nothing it reads escapes the rules.
    func admit(_ query: Query, as identity: Identity) throws -> Query {
        try authorizeQuery(query, identity)
        guard query.hasDocumentCursor else { return query }
        var documents: [DocumentPath: Document] = [:]
        for path in query.cursorDocuments {
            let stored = try store.pointRead { try $0.document(at: path) }
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
