import HearthCore
import HearthEngine
import HearthStore
import Hummingbird

/// `POST /v1/query` and `POST /v1/aggregate` (DESIGN §3, §4). A transaction id comes as the body's
/// `"transaction"` field or the `?transaction=` parameter (both may be given if they agree).
struct QueryRoutes {
    let database: Database

    func register(on router: Router<HearthRequestContext>) {
        router.post("/v1/query") { request, context in try await self.query(request, context) }
        router.post("/v1/aggregate") { request, context in try await self.aggregate(request, context) }
    }

    func query(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        let params = try QueryParameters(request, allowed: ["transaction"])
        var request = request
        let (body, transaction) = try Self.splitTransaction(try await request.jsonBody(context: context), params)
        let query = try Query(json: body)
        let result = try await database.runQuery(query, as: context.identity, transaction: transaction)
        return Self.reply(result).response
    }

    /// A query's answer: its documents and read time.
    static func reply(_ result: QueryResult) -> JSONReply {
        var w = JSONWriter(capacity: 256 * result.documents.count + 64)
        writeDocumentsArray(result.documents, to: &w)
        w.raw(",\"readTime\":\"")
        w.rfc3339(result.readTime)
        w.raw("\"}")
        return JSONReply(w.bytes)
    }

    func aggregate(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        let params = try QueryParameters(request, allowed: ["transaction"])
        var request = request
        let (body, transaction) = try Self.splitTransaction(try await request.jsonBody(context: context), params)
        let aggregate = try AggregateQuery(json: body)
        let result = try await database.runAggregate(aggregate, as: context.identity, transaction: transaction)
        var w = JSONWriter()
        w.raw("{\"result\":{")
        for (i, alias) in result.order.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(alias)
            w.raw(":")
            (result.values[alias] ?? .null).write(to: &w)
        }
        w.raw("},\"readTime\":\"")
        w.rfc3339(result.readTime)
        w.raw("\"}")
        return jsonResponse(w.bytes)
    }

    /// Takes the `"transaction"` field out of a request body, checking it against `?transaction=`.
    static func splitTransaction(_ body: JSON, _ params: QueryParameters) throws(HearthError) -> (JSON, String?) {
        var transaction = params["transaction"]
        guard case .object(var pairs) = body else { return (body, transaction) }
        if let k = pairs.firstIndex(where: { $0.0 == "transaction" }) {
            guard case .string(let id) = pairs[k].1 else {
                throw .invalidArgument("'transaction' must be a string (the id from POST /v1/transactions)")
            }
            if let other = transaction, other != id {
                throw .invalidArgument("the body's 'transaction' and the ?transaction= parameter name different transactions")
            }
            transaction = id
            pairs.remove(at: k)
        }
        return (.object(pairs), transaction)
    }
}
