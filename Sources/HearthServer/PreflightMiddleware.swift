import HearthCore
import HTTPTypes
import Hummingbird

/// Answers a browser's CORS preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) for any
/// path: `204` with the methods and headers allowed when `CORSPolicy` allows the origin, else `403`. The
/// origin's own headers (`Access-Control-Allow-Origin`, `Vary`) are added by `ConnectionGuard`, as to
/// every answer.
struct PreflightMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext
    let policy: CORSPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .options, let origin = request.headers[.origin],
              request.headers[.accessControlRequestMethod] != nil else {
            return try await next(request, context)
        }
        guard policy.allows(origin) else {
            throw HearthError.permissionDenied("the origin \(origin.prefix(200)) is not one the server allows (--cors-origin)")
        }
        var headers = HTTPFields()
        for field in policy.preflightFields(requested: request.headers[.accessControlRequestHeaders]) {
            if let name = HTTPField.Name(field.name) { headers.append(HTTPField(name: name, value: field.value)) }
        }
        return Response(status: .noContent, headers: headers)
    }
}
