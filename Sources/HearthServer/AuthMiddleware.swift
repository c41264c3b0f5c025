import HearthAuth
import HearthCore
import Hummingbird

/// Turns the `Authorization` header into the request's identity (`Authenticator`).
struct AuthMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext
    let authenticator: Authenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], !Self.credentialFree.contains(request.uri.path) else {
            return try await next(request, context)
        }
        var context = context
        let caller = try authenticator.caller(authorization: header)
        context.identity = caller.identity
        context.sessionID = caller.sessionID
        context.isFunction = caller.isFunction
        return try await next(request, context)
    }

    /// Account calls that act on credentials in their body, never on the caller's: a client that sends its
    /// expired access token along with everything (as SDKs do) must still be able to refresh or sign in. And
    /// `/metrics`, which checks its own key (`MetricsAccess`).
    static let credentialFree: Set<String> = [
        "/v1/auth/signup", "/v1/auth/login", "/v1/auth/anonymous", "/v1/auth/refresh", "/v1/auth/password-reset",
        "/v1/auth/password-reset/confirm", "/v1/auth/verify-email/confirm", "/metrics",
    ]
}
