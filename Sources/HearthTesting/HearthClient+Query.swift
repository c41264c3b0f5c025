import HearthCore

/// Queries, aggregations and dataset loading for tests.
extension HearthClient {
    /// Runs a query (`POST /v1/query`); `body` is the query's JSON text.
    public func query(_ body: String, transaction: String? = nil, as caller: Caller? = nil) async throws -> HTTPResult {
        try await post("/v1/query" + (transaction.map { "?transaction=\($0)" } ?? ""), body, as: caller)
    }

    /// Runs an aggregation (`POST /v1/aggregate`); `body` is `{"query": ..., "aggregations": ...}` as JSON text.
    public func aggregate(_ body: String, transaction: String? = nil, as caller: Caller? = nil) async throws -> HTTPResult {
        try await post("/v1/aggregate" + (transaction.map { "?transaction=\($0)" } ?? ""), body, as: caller)
    }

    /// Writes documents (path → fields as wire JSON text) in one commit; throws unless it succeeds.
    public func load(_ documents: [(String, String)]) async throws {
        let writes = documents.map { "{\"set\": \(JSON.string($0.0).text), \"data\": \($0.1)}" }.joined(separator: ",")
        let result = try await post("/v1/commit", "{\"writes\": [\(writes)]}")
        guard result.status == 200 else { throw HearthError.internal("loading documents failed: \(result.text)") }
    }
}

extension HTTPResult {
    /// The ids of a query answer's documents, in order.
    public var documentIDs: [String] {
        guard case .array(let docs)? = json?["documents"] else { return [] }
        return docs.compactMap { $0["id"]?.stringValue }
    }

    /// The paths of a query answer's documents, in order.
    public var documentPaths: [String] {
        guard case .array(let docs)? = json?["documents"] else { return [] }
        return docs.compactMap { $0["path"]?.stringValue }
    }
}
