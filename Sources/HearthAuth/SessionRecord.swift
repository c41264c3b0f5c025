import HearthCore

/// A stored sign-in session: one access token and one refresh token at a time, both stored hashed.
/// Refreshing rotates both in place; the retired refresh hashes are kept (by storage) so that a reused one
/// can be recognised and revoke the session.
public struct SessionRecord: Sendable, Equatable {
    /// The session's id (random, not a secret).
    public var id: String
    /// Whose session it is.
    public var uid: String
    /// SHA-256 of the current access token.
    public var accessTokenHash: TokenHash
    /// When the current access token was issued.
    public var accessIssuedAt: Timestamp
    /// When the current access token stops working.
    public var accessExpires: Timestamp
    /// SHA-256 of the current refresh token.
    public var refreshTokenHash: TokenHash
    /// When the current refresh token stops working.
    public var refreshExpires: Timestamp
    /// When the session was opened (the sign-in time, `auth_time`).
    public var createdAt: Timestamp
    /// When the session was revoked, if it was; a revoked session never works again.
    public var revokedAt: Timestamp?
    /// How the session was opened.
    public var provider: SignInProvider
    /// The claims of a `custom` session, which stands without an account (nil for an account's session).
    public var claims: [String: Value]?

    /// Makes a record.
    public init(id: String, uid: String, accessTokenHash: TokenHash, accessIssuedAt: Timestamp,
                accessExpires: Timestamp, refreshTokenHash: TokenHash, refreshExpires: Timestamp,
                createdAt: Timestamp, revokedAt: Timestamp? = nil, provider: SignInProvider,
                claims: [String: Value]? = nil) {
        self.id = id
        self.uid = uid
        self.accessTokenHash = accessTokenHash
        self.accessIssuedAt = accessIssuedAt
        self.accessExpires = accessExpires
        self.refreshTokenHash = refreshTokenHash
        self.refreshExpires = refreshExpires
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.provider = provider
        self.claims = claims
    }

    /// True for an identity token's session (`AuthService.issueIdentityToken`, a function's): only that call
    /// makes a `custom` session with claims of its own; an account's claims live on the account.
    public var isIdentityToken: Bool { provider == .custom && claims != nil }

    /// True while the session is not revoked and its access token has not expired.
    public func accessIsLive(at now: Timestamp) -> Bool { revokedAt == nil && now < accessExpires }
    /// True while the session is not revoked and its refresh token has not expired.
    public func refreshIsLive(at now: Timestamp) -> Bool { revokedAt == nil && now < refreshExpires }
}

/// A new token pair for a session, as written by a rotation.
public struct SessionRotation: Sendable, Equatable {
    /// SHA-256 of the new access token.
    public var accessTokenHash: TokenHash
    /// When the new access token was issued.
    public var accessIssuedAt: Timestamp
    /// When the new access token expires.
    public var accessExpires: Timestamp
    /// SHA-256 of the new refresh token.
    public var refreshTokenHash: TokenHash
    /// When the new refresh token expires.
    public var refreshExpires: Timestamp

    /// Makes a rotation.
    public init(accessTokenHash: TokenHash, accessIssuedAt: Timestamp, accessExpires: Timestamp,
                refreshTokenHash: TokenHash, refreshExpires: Timestamp) {
        self.accessTokenHash = accessTokenHash
        self.accessIssuedAt = accessIssuedAt
        self.accessExpires = accessExpires
        self.refreshTokenHash = refreshTokenHash
        self.refreshExpires = refreshExpires
    }
}
