import HearthAuth
import HearthCore
import Hummingbird

/// The account endpoints under `/v1/auth` (docs/api.md, Accounts). Bodies are decoded by `AuthRequest`
/// (errors name the field), the flows run in `AuthService`; this file only maps them to HTTP.
struct AuthRoutes {
    let auth: AuthService
    let clientAddress: ClientAddress

    func register(on router: Router<HearthRequestContext>) {
        router.post("/v1/auth/signup") { request, context in
            let body = try AuthRequest.SignUp(json: try await Self.body(request, context))
            let result = try await auth.signUp(email: body.email, password: body.password, displayName: body.displayName,
                                               clientAddress: clientAddress(request, context))
            return jsonResponse(result.json.serialized())
        }
        router.post("/v1/auth/login") { request, context in
            let body = try AuthRequest.LogIn(json: try await Self.body(request, context))
            let result = try await auth.logIn(email: body.email, password: body.password,
                                              clientAddress: clientAddress(request, context))
            return jsonResponse(result.json.serialized())
        }
        router.post("/v1/auth/anonymous") { request, context in
            try await Self.emptyBody(request, context)
            let result = try await auth.signInAnonymously(clientAddress: clientAddress(request, context))
            return jsonResponse(result.json.serialized())
        }
        router.post("/v1/auth/refresh") { request, context in
            let body = try AuthRequest.Refresh(json: try await Self.body(request, context))
            return jsonResponse(try await auth.refresh(refreshToken: body.refreshToken).json.serialized())
        }
        router.post("/v1/auth/logout") { request, context in
            try await Self.emptyBody(request, context)
            try await auth.logOut(sessionID: try Self.session(context))
            return Response(status: .noContent)
        }
        router.get("/v1/auth/me") { _, context in
            jsonResponse(try await auth.me(sessionID: try Self.session(context)).json.serialized())
        }
        router.delete("/v1/auth/me") { _, context in
            try await auth.deleteAccount(sessionID: try Self.session(context))
            return Response(status: .noContent)
        }
        router.post("/v1/auth/password") { request, context in
            let body = try AuthRequest.ChangePassword(json: try await Self.body(request, context))
            let user = try await auth.changePassword(
                sessionID: try Self.session(context), currentPassword: body.currentPassword,
                newPassword: body.newPassword, clientAddress: clientAddress(request, context))
            return jsonResponse(user.json.serialized())
        }
        router.post("/v1/auth/password-reset") { request, context in
            let body = try AuthRequest.PasswordReset(json: try await Self.body(request, context))
            try await auth.requestPasswordReset(email: body.email, clientAddress: clientAddress(request, context))
            // The same answer whether or not the address has an account.
            return Response(status: .accepted)
        }
        router.post("/v1/auth/password-reset/confirm") { request, context in
            let body = try AuthRequest.PasswordResetConfirm(json: try await Self.body(request, context))
            let user = try await auth.confirmPasswordReset(token: body.token, newPassword: body.newPassword)
            return jsonResponse(user.json.serialized())
        }
        router.post("/v1/auth/verify-email") { request, context in
            try await Self.emptyBody(request, context)
            try await auth.requestEmailVerification(sessionID: try Self.session(context))
            return Response(status: .accepted)
        }
        router.post("/v1/auth/verify-email/confirm") { request, context in
            let body = try AuthRequest.VerifyEmailConfirm(json: try await Self.body(request, context))
            return jsonResponse(try await auth.confirmEmailVerification(token: body.token).json.serialized())
        }
    }

    static func body(_ request: Request, _ context: HearthRequestContext) async throws -> JSON {
        var request = request
        return try await request.jsonBody(context: context)
    }

    /// Calls without fields still refuse a body that names any, so a misdirected request fails loudly.
    static func emptyBody(_ request: Request, _ context: HearthRequestContext) async throws {
        guard case .object(let pairs) = try await body(request, context) else {
            throw HearthError.invalidArgument("the request body must be empty or {}")
        }
        if let (key, _) = pairs.first {
            throw HearthError.invalidArgument("unknown field '\(key.prefix(64))'; this call takes no fields")
        }
    }

    /// The caller's session: this call needs a user's access token.
    static func session(_ context: HearthRequestContext) throws(HearthError) -> String {
        switch context.identity {
        case .user:
            guard let id = context.sessionID else { throw .unauthenticated("sign in first: this call needs an access token") }
            return id
        case .admin:
            throw .permissionDenied("the admin key has no account; use /v1/admin/users to manage accounts")
        case .unauthenticated:
            throw .unauthenticated("sign in first: this call needs 'Authorization: Bearer <access token>'")
        }
    }
}
