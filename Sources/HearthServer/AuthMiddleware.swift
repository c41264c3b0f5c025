import HearthAuth
import HearthCore
import Hummingbird

/// Turns the `Authorization` header into the request's identity: the admin key, or nobody.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext
    let adminKey: AdminKey

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.identity = try identity(for: request)
        return try await next(request, context)
    }

    func identity(for request: Request) throws(HearthError) -> Identity {
        guard let header = request.headers[.authorization] else { return .unauthenticated }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw .unauthenticated("the Authorization header must be 'Bearer <token>'")
        }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        if adminKey.matches(token) { return .admin }
        throw .unauthenticated("the bearer token is not valid or has expired")
    }
}
