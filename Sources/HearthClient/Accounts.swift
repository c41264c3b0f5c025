import Foundation
import HearthCore
import NIOHTTP1

/// A user account, as `GET /v1/auth/me` answers it.
public struct User: Sendable, Equatable {
    public var uid: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var isAnonymous: Bool

    init(json: JSON) throws(HearthClientError) {
        guard let uid = json["uid"]?.stringValue else { throw .decoding("a user without a uid") }
        self.uid = uid
        email = json["email"]?.stringValue
        emailVerified = json["emailVerified"] == .bool(true)
        displayName = json["displayName"]?.stringValue
        isAnonymous = json["anonymous"] == .bool(true)
    }
}

/// Accounts (docs/api.md, Accounts), in the manner of Firebase Authentication: signing in makes the client act
/// as that user, keeping the session's tokens and refreshing the access token before it expires.
public struct Accounts: Sendable {
    let hearth: Hearth

    /// The signed-in user, or nil (no session: the admin key, a token handed over, or no credentials).
    public var currentUser: User? {
        get async {
            if case .session(let s) = await hearth.credentials.mode { return s.user }
            return nil
        }
    }

    /// Creates an account with an email and a password and signs in as it.
    @discardableResult
    public func createUser(withEmail email: String, password: String, displayName: String? = nil) async throws(HearthClientError) -> User {
        var body: [(String, JSON)] = [("email", .string(email)), ("password", .string(password))]
        if let displayName { body.append(("displayName", .string(displayName))) }
        return try await signIn("/v1/auth/signup", body: .object(body))
    }

    /// Signs in with an email and a password.
    @discardableResult
    public func signIn(withEmail email: String, password: String) async throws(HearthClientError) -> User {
        try await signIn("/v1/auth/login", body: .object([("email", .string(email)), ("password", .string(password))]))
    }

    /// Signs in as a new anonymous account.
    @discardableResult
    public func signInAnonymously() async throws(HearthClientError) -> User {
        try await signIn("/v1/auth/anonymous", body: nil)
    }

    private func signIn(_ path: String, body: JSON?) async throws(HearthClientError) -> User {
        let answer = try await hearth.transport.send(.POST, path, body: body ?? .object([]), token: nil)
        let session = try Credentials.session(from: answer.body)
        await hearth.credentials.set(.session(session))
        return session.user
    }

    /// Exchanges the refresh token for a new pair now (the client does it by itself before the access token
    /// expires); returns the new access token.
    @discardableResult
    public func refreshToken() async throws(HearthClientError) -> String {
        try await hearth.credentials.refresh().accessToken
    }

    /// The current access token of the session (or the bearer token the client was made with).
    public func idToken() async throws(HearthClientError) -> String? {
        try await hearth.credentials.token()
    }

    /// Ends the session on the server (its tokens stop working at once) and forgets it here.
    public func signOut() async throws(HearthClientError) {
        guard case .session(let s) = await hearth.credentials.mode else { return }
        await hearth.credentials.set(.none)
        _ = try await hearth.transport.send(.POST, "/v1/auth/logout", token: s.accessToken)
    }

    /// The signed-in user as the server has it now.
    public func fetchUser() async throws(HearthClientError) -> User {
        let answer = try await hearth.call(.GET, "/v1/auth/me")
        guard let body = answer.body else { throw .decoding("GET /v1/auth/me answered no user") }
        return try User(json: body)
    }

    /// Changes the password; the server ends every other session of the account.
    public func updatePassword(current: String, to newPassword: String) async throws(HearthClientError) {
        _ = try await hearth.call(.POST, "/v1/auth/password",
                                  body: .object([("currentPassword", .string(current)), ("newPassword", .string(newPassword))]))
    }

    /// Asks for a password-reset link for an address (answered the same whether or not it has an account).
    public func sendPasswordReset(withEmail email: String) async throws(HearthClientError) {
        _ = try await hearth.transport.send(.POST, "/v1/auth/password-reset", body: .object([("email", .string(email))]), token: nil)
    }

    /// Deletes the signed-in account and all its sessions (its documents stay).
    public func deleteAccount() async throws(HearthClientError) {
        _ = try await hearth.call(.DELETE, "/v1/auth/me")
        await hearth.credentials.set(.none)
    }
}
