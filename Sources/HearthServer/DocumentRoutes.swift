import HearthCore
import HearthEngine
import Hummingbird

/// The router's way into the document API: each route collects the request's body, and `DocumentAPI` makes it
/// an operation, which the engine performs (reads on a reader thread) and `DocumentAPI` answers.
struct DocumentRoutes {
    let database: Database
    let api: DocumentAPI
    /// Where a request comes from: open transactions are bounded per address too.
    let clientAddress: ClientAddress

    func register(on router: Router<HearthRequestContext>) {
        for (method, path) in DocumentAPI.routes {
            router.on(RouterPath(stringLiteral: path), method: method) { request, context in try await self.answer(request, context) }
        }
    }

    func answer(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        var request = request
        // The body of a read or a delete is ignored, as it always has been.
        let body = request.method == .get || request.method == .delete ? nil : try await request.jsonBody(context: context)
        let call = try api.call(request.method, request.uri, headers: request.headers, body: body,
                                address: clientAddress(request, context))
        let outcome = try await database.perform(call.operation, as: context.identity)
        return try DocumentAPI.reply(outcome, call.answer, call.operation).response
    }
}
