import HearthCore

/// What a successful sign-in, sign-up or refresh answers (docs/api.md, Accounts): the account and a fresh
/// token pair.
public struct SignInResult: Sendable, Equatable, CustomStringConvertible {
    /// The account.
    public var user: UserRecord
    /// The access token (`hat_…`).
    public var token: String
    /// The refresh token (`hrt_…`).
    public var refreshToken: String
    /// Seconds until the access token expires.
    public var expiresIn: Int64
    /// The session the tokens belong to (not part of the answer's JSON).
    public var sessionID: String

    /// Makes a result.
    public init(user: UserRecord, token: String, refreshToken: String, expiresIn: Int64, sessionID: String) {
        self.user = user
        self.token = token
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.sessionID = sessionID
    }

    /// The answer's JSON: `{user, token, refreshToken, expiresIn}`.
    public var json: JSON {
        .object([
            ("user", user.json),
            ("token", .string(token)),
            ("refreshToken", .string(refreshToken)),
            ("expiresIn", .int(expiresIn)),
        ])
    }

    /// Redacted: tokens never reach a log through string interpolation.
    public var description: String {
        "SignInResult(uid: \(user.uid), session: \(sessionID), expiresIn: \(expiresIn), tokens: <redacted>)"
    }
}
