import HearthCore

extension AuthService {
    /// A session's identity as it is now (claims, email, verification), for a live connection signed in
    /// with it: the session must not be revoked and its account must exist and be enabled. Its access
    /// token may have expired since, as listeners outlive the token they connected with.
    public func currentIdentity(sessionID: String) async throws(HearthError) -> Identity {
        guard let session = try await storage.session(id: sessionID) else {
            throw .unauthenticated("The session does not exist; sign in again.")
        }
        guard session.revokedAt == nil else { throw Self.sessionRevoked }
        if let claims = session.claims { return Self.identity(uid: session.uid, claims: claims, session: session) }
        return Self.identity(user: try await activeUser(session.uid), session: session)
    }

    /// Issues a short-lived access token for a declared identity (a functions endpoint's): a `custom` session
    /// of `uid` with these claims, which needs no account and has no refresh token. Stored, like every
    /// session, only as the token's hash. It ends when it expires, when the uid's sessions are revoked or its
    /// account deleted, and is swept with other ended sessions.
    public func issueIdentityToken(uid: String, claims: [String: Value], lifetime: Duration)
        async throws(HearthError) -> (token: String, expires: Timestamp) {
        try Self.validateUID(uid)
        try Self.validateClaims(claims)
        let access = Tokens.generate(.access)
        let time = now()
        let expires = time.adding(lifetime)
        // No refresh token is handed out: the hash of one nobody holds fills the column.
        let session = SessionRecord(
            id: makeAutoID(), uid: uid, accessTokenHash: Tokens.hash(access), accessIssuedAt: time, accessExpires: expires,
            refreshTokenHash: Tokens.hash(Tokens.generate(.refresh)), refreshExpires: expires, createdAt: time,
            provider: .custom, claims: claims)
        try await storage.insertSession(session)
        return (access, expires)
    }

    /// The identity rules see for a `custom` session: its claims under the standard ones, as `identity(user:session:)`
    /// makes them for an account, with `firebase.sign_in_provider` `custom`.
    static func identity(uid: String, claims: [String: Value], session: SessionRecord) -> Identity {
        var token = claims
        token["sub"] = .string(uid)
        token["user_id"] = .string(uid)
        token["auth_time"] = .int(session.createdAt.epochSeconds)
        token["iat"] = .int(session.accessIssuedAt.epochSeconds)
        token["exp"] = .int(session.accessExpires.epochSeconds)
        token["firebase"] = .map(["sign_in_provider": .string(session.provider.rawValue), "identities": .map([:])])
        return .user(uid: uid, token: token)
    }

    /// The identity rules see for a session: `request.auth = {uid, token}`, with Firebase's token claims —
    /// `sub` and `user_id` (the uid), `email` and `email_verified` (accounts with an email), `name`,
    /// `auth_time`, `iat`, `exp` (seconds), `firebase: {sign_in_provider, identities}` — over the custom
    /// claims, which may not use these names.
    public static func identity(user: UserRecord, session: SessionRecord) -> Identity {
        var token = user.claims
        token["sub"] = .string(user.uid)
        token["user_id"] = .string(user.uid)
        var identities: [String: Value] = [:]
        if let email = user.email {
            token["email"] = .string(email)
            token["email_verified"] = .bool(user.emailVerified)
            identities["email"] = .array([.string(email)])
        }
        if let name = user.displayName { token["name"] = .string(name) }
        token["auth_time"] = .int(session.createdAt.epochSeconds)
        token["iat"] = .int(session.accessIssuedAt.epochSeconds)
        token["exp"] = .int(session.accessExpires.epochSeconds)
        token["firebase"] = .map([
            "sign_in_provider": .string(session.provider.rawValue),
            "identities": .map(identities),
        ])
        return .user(uid: user.uid, token: token)
    }

    /// Checks a custom-claims map: no reserved names, at most `AuthLimits.maxClaimsBytes` as JSON.
    public static func validateClaims(_ claims: [String: Value]) throws(HearthError) {
        for key in claims.keys.sorted() {
            if AuthLimits.reservedClaims.contains(key) {
                throw .invalidArgument("claims: '\(key)' is a reserved claim name")
            }
            try validateFieldName(key, at: "claims.\(key)")
        }
        let size = Value.encodeFields(claims).count
        if size > AuthLimits.maxClaimsBytes {
            throw .invalidArgument("claims are \(size) bytes as JSON; the limit is \(AuthLimits.maxClaimsBytes)")
        }
    }
}
