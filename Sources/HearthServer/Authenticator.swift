import HearthAuth
import HearthCore

/// The one place a bearer token becomes a caller, for every way in: the router (`AuthMiddleware`), the
/// event-loop fast path (`InlineAnswers`) and live updates (the upgrade and the `auth` message). The admin
/// key acts as the owner; a user's access token is one indexed lookup of its session on the caller's thread,
/// so a revocation applies to the very next request.
struct Authenticator: Sendable {
    let adminKey: AdminKey
    let auth: AuthService

    /// Who a token speaks for.
    struct Caller: Sendable {
        var identity: Identity
        /// The session of a user's access token (logout, `me` and listeners act on it).
        var sessionID: String?
        /// When a user's access token stops working.
        var expires: ContinuousClock.Instant?
        /// True for a function's identity token (the server made it for an event), which may send email and push.
        var isFunction = false

        static let nobody = Caller(identity: .unauthenticated)
        static let admin = Caller(identity: .admin)
    }

    /// The caller an `Authorization` header presents: nobody without one; an error for a header that is not
    /// `Bearer <admin key or access token>`, or a token that does not work.
    func caller(authorization header: String?) throws(HearthError) -> Caller {
        guard let header else { return .nobody }
        guard let token = AdminKey.bearerToken(header) else {
            throw .unauthenticated("the Authorization header must be 'Bearer <token>'")
        }
        return try caller(token: token)
    }

    /// The caller a bearer token speaks for.
    func caller(token: String) throws(HearthError) -> Caller {
        if adminKey.matches(token) { return .admin }
        guard token.hasPrefix(Tokens.Kind.access.prefix) else {
            throw .unauthenticated("the bearer token is neither the admin key nor an access token")
        }
        let (identity, sessionID, remaining, isIdentityToken) = try auth.authenticateWithLifetime(accessToken: token)
        return Caller(identity: identity, sessionID: sessionID, expires: .now + remaining, isFunction: isIdentityToken)
    }
}
