import HearthCore

/// A sign-in answer (`{user, token, refreshToken, expiresIn}`) as tests use it.
public struct SignedIn: Sendable {
    /// The account's uid.
    public let uid: String
    /// The access token.
    public let token: String
    /// The refresh token.
    public let refreshToken: String
    /// Seconds the access token lives.
    public let expiresIn: Int64
    /// The `user` object.
    public let user: JSON

    /// Decodes a successful sign-in response; nil for anything else.
    public init?(_ result: HTTPResult) {
        guard result.status == 200, let json = result.json, let user = json["user"],
              let uid = user["uid"]?.stringValue, let token = json["token"]?.stringValue,
              let refresh = json["refreshToken"]?.stringValue, case .int(let expiresIn)? = json["expiresIn"]
        else { return nil }
        self.uid = uid
        self.token = token
        self.refreshToken = refresh
        self.expiresIn = expiresIn
        self.user = user
    }
}

/// A sign-in flow answered something other than a session.
public struct SignInFailed: Error, CustomStringConvertible {
    /// The response.
    public let result: HTTPResult
    public var description: String { "sign-in failed with \(result.status): \(result.text.prefix(300))" }
}

extension HearthClient {
    /// A JSON object body from string fields, escaped properly.
    public static func body(_ fields: [(String, String)]) -> String {
        JSON.object(fields.map { ($0.0, JSON.string($0.1)) }).text
    }

    /// `POST /v1/auth/signup`.
    public func signUp(_ email: String, _ password: String, displayName: String? = nil) async throws -> HTTPResult {
        var fields = [("email", email), ("password", password)]
        if let displayName { fields.append(("displayName", displayName)) }
        return try await post("/v1/auth/signup", Self.body(fields), as: .nobody)
    }

    /// `POST /v1/auth/login`.
    public func logIn(_ email: String, _ password: String) async throws -> HTTPResult {
        try await post("/v1/auth/login", Self.body([("email", email), ("password", password)]), as: .nobody)
    }

    /// `POST /v1/auth/refresh`.
    public func refresh(_ refreshToken: String) async throws -> HTTPResult {
        try await post("/v1/auth/refresh", Self.body([("refreshToken", refreshToken)]), as: .nobody)
    }

    /// Signs up and answers the session, or throws `SignInFailed`.
    public func signedUp(_ email: String, _ password: String, displayName: String? = nil) async throws -> SignedIn {
        let result = try await signUp(email, password, displayName: displayName)
        guard let session = SignedIn(result) else { throw SignInFailed(result: result) }
        return session
    }

    /// Logs in and answers the session, or throws `SignInFailed`.
    public func loggedIn(_ email: String, _ password: String) async throws -> SignedIn {
        let result = try await logIn(email, password)
        guard let session = SignedIn(result) else { throw SignInFailed(result: result) }
        return session
    }
}
