import HearthAuth
import HearthCore
import Hummingbird

/// Turns the `Authorization` header into the request's identity: the admin key, a user's access token
/// (one indexed lookup of its session, so a revocation applies to the very next request), or nobody.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext
    let adminKey: AdminKey
    let auth: AuthService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], !Self.credentialFree.contains(request.uri.path) else {
            return try await next(request, context)
        }
        var context = context
        switch try Credentials(header, adminKey: adminKey) {
        case .admin:
            context.identity = .admin
        case .accessToken(let token):
            let (identity, sessionID) = try await auth.authenticate(accessToken: token)
            context.identity = identity
            context.sessionID = sessionID
        }
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

/// What an `Authorization` header presents: the admin key or a user's access token.
enum Credentials {
    case admin
    case accessToken(String)

    init(_ header: String, adminKey: AdminKey) throws(HearthError) {
        guard let token = AdminKey.bearerToken(header) else {
            throw .unauthenticated("the Authorization header must be 'Bearer <token>'")
        }
        if adminKey.matches(token) {
            self = .admin
        } else if token.hasPrefix(Tokens.Kind.access.prefix) {
            self = .accessToken(token)
        } else {
            throw .unauthenticated("the bearer token is neither the admin key nor an access token")
        }
    }
}
