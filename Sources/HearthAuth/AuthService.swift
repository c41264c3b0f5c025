import HearthCore

/// The account and session flows (docs/api.md, Accounts), independent of storage and HTTP.
///
/// Every secret is handled here the same way: tokens are generated with 256 random bits and stored only as
/// SHA-256 hashes; passwords are hashed with Argon2id on the hasher's bounded pool; no message or error
/// ever quotes a token or a password. Sessions are read from storage on every `authenticate`, so a
/// revocation takes effect at once; `revocations` tells live listeners about it in the same moment.
public final class AuthService: Sendable {
    /// Where accounts and sessions live.
    public let storage: any AuthStorage
    /// Argon2id hashing, on its bounded pool.
    public let hasher: PasswordHasher
    /// Lifetimes, policies and limits.
    public let configuration: Configuration
    /// The clock (injected so tests can move time).
    public let now: @Sendable () -> Timestamp
    /// Where revocations are announced, the moment they happen.
    public let revocations: RevocationHub

    let loginThrottle: Locked<LoginThrottle>
    let mailThrottle: Locked<LoginThrottle>
    let creationThrottle: Locked<LoginThrottle>
    /// Verified against when an email has no account, so that answer takes as long as a wrong password.
    let dummyHash: String

    /// Makes the service.
    public init(storage: any AuthStorage, hasher: PasswordHasher, configuration: Configuration = Configuration(),
                revocations: RevocationHub = RevocationHub(),
                now: @escaping @Sendable () -> Timestamp = { Timestamp.now() }) {
        self.storage = storage
        self.hasher = hasher
        self.configuration = configuration
        self.now = now
        self.revocations = revocations
        self.loginThrottle = Locked(LoginThrottle(configuration: configuration.loginThrottle, now: now))
        self.mailThrottle = Locked(LoginThrottle(configuration: configuration.mailThrottle, now: now))
        self.creationThrottle = Locked(LoginThrottle(configuration: configuration.creationThrottle, now: now))
        self.dummyHash = hasher.makeDummyHash()
    }

    // MARK: Sign-up and sign-in

    /// Makes a password account and signs it in. A taken email answers `already-exists`, as Firebase Auth's
    /// `EMAIL_EXISTS` does: sign-up cannot hide that an address is in use without mailing the owner instead.
    public func signUp(email rawEmail: String, password: String, displayName: String? = nil,
                       clientAddress: String? = nil) async throws(HearthError) -> SignInResult {
        let email = try EmailAddress(rawEmail)
        try configuration.passwordPolicy.check(password)
        let name = try Self.checkDisplayName(displayName)
        try admitCreation(from: clientAddress)
        if try await storage.user(emailNormalized: email.normalized) != nil { throw Self.emailTaken }
        let hash = try await hasher.hash(password)
        let user = UserRecord(uid: makeAutoID(), email: email.original, emailNormalized: email.normalized,
                              passwordHash: hash, displayName: name, createdAt: now())
        do throws(HearthError) {
            try await storage.insertUser(user)
        } catch where error.code == .alreadyExists {
            throw Self.emailTaken  // lost a race with a concurrent sign-up for the same address
        }
        return try await openSession(for: user)
    }

    /// Signs in with email and password. An unknown email and a wrong password get the same error after
    /// the same work (a verification against a dummy hash); failures are throttled per account and per
    /// client address. A hash made with old parameters is replaced with a current one.
    public func logIn(email rawEmail: String, password: String, clientAddress: String? = nil)
        async throws(HearthError) -> SignInResult {
        let email = try EmailAddress(rawEmail)
        try PasswordPolicy.checkOffered(password)
        let account = email.normalized
        if let wait = loginThrottle.withLock({ $0.retryAfter(account: account, address: clientAddress) }) {
            throw Self.tooManyAttempts(wait)
        }
        let user = try await storage.user(emailNormalized: account)
        let stored = user?.passwordHash
        let matches = try await hasher.verify(password, against: stored ?? dummyHash)
        guard matches, stored != nil, var user else {
            loginThrottle.withLock { $0.recordFailure(account: account, address: clientAddress) }
            throw Self.badCredentials
        }
        loginThrottle.withLock { $0.recordSuccess(account: account) }
        // Only after the password matched, so a guesser learns nothing about disabled accounts.
        guard !user.disabled else { throw .permissionDenied("This account has been disabled.") }
        if let stored, hasher.needsRehash(stored), let fresh = try? await hasher.hash(password) {
            user.passwordHash = fresh
            // Best effort: failing to upgrade the hash must not fail the sign-in.
            try? await storage.updateUser(user)
        }
        return try await openSession(for: user)
    }

    /// Makes an anonymous account and signs it in.
    public func signInAnonymously(clientAddress: String? = nil) async throws(HearthError) -> SignInResult {
        guard configuration.allowAnonymous else {
            throw .permissionDenied("Anonymous sign-in is disabled on this server.")
        }
        try admitCreation(from: clientAddress)
        let user = UserRecord(uid: makeAutoID(), anonymous: true, createdAt: now())
        try await storage.insertUser(user)
        return try await openSession(for: user)
    }

    /// Exchanges a refresh token for a new token pair (rotation). A refresh token that was already
    /// exchanged revokes its whole session: either its owner or a thief is replaying it.
    public func refresh(refreshToken: String) async throws(HearthError) -> SignInResult {
        guard Tokens.isWellFormed(refreshToken, .refresh) else {
            throw .unauthenticated("The refresh token is malformed.")
        }
        let presented = Tokens.hash(refreshToken)
        let time = now()
        if let session = try await storage.session(refreshTokenHash: presented) {
            guard session.revokedAt == nil else { throw Self.sessionRevoked }
            guard time < session.refreshExpires else {
                throw .unauthenticated("The refresh token has expired; sign in again.")
            }
            let user = try await activeUser(session.uid)
            let access = Tokens.generate(.access)
            let refresh = Tokens.generate(.refresh)
            let rotation = SessionRotation(
                accessTokenHash: Tokens.hash(access), accessIssuedAt: time,
                accessExpires: time.adding(configuration.accessTokenLifetime),
                refreshTokenHash: Tokens.hash(refresh),
                refreshExpires: time.adding(configuration.refreshTokenLifetime))
            guard try await storage.rotateSession(id: session.id, from: presented, to: rotation) != nil else {
                // A concurrent refresh spent this token first: that is a reuse too.
                try await revokeForReuse(session, at: time)
            }
            return SignInResult(user: user, token: access, refreshToken: refresh,
                                expiresIn: configuration.accessTokenLifetime.components.seconds, sessionID: session.id)
        }
        if let session = try await storage.session(retiredRefreshHash: presented) {
            try await revokeForReuse(session, at: time)
        }
        throw .unauthenticated("The refresh token is invalid or has been revoked; sign in again.")
    }

    /// Checks an access token and answers the identity rules see (`request.auth`) and the session's id.
    /// Reads storage every time: a revoked or expired session fails at once.
    public func authenticate(accessToken: String) throws(HearthError) -> (identity: Identity, sessionID: String) {
        let (identity, sessionID, _, _) = try authenticateWithLifetime(accessToken: accessToken)
        return (identity, sessionID)
    }

    /// `authenticate`, and how much longer the access token works: for a connection that outlives a request,
    /// which must end (or be given a fresh token) when its token expires. A lookup on the caller's thread.
    /// `isIdentityToken` is true for a token `issueIdentityToken` made (a function's): a mark of the session
    /// itself, which no claim an account can be given sets.
    public func authenticateWithLifetime(accessToken: String) throws(HearthError)
        -> (identity: Identity, sessionID: String, remaining: Duration, isIdentityToken: Bool) {
        guard Tokens.isWellFormed(accessToken, .access) else {
            throw .unauthenticated("The access token is malformed.")
        }
        let found = try storage.sessionWithUser(accessTokenHash: Tokens.hash(accessToken))
        let (identity, sessionID) = try checked(found)
        let left = (found?.0.accessExpires.microseconds ?? 0) - now().microseconds
        return (identity, sessionID, .microseconds(max(0, left)), found?.0.isIdentityToken ?? false)
    }

    private func checked(_ found: (SessionRecord, UserRecord?)?) throws(HearthError) -> (identity: Identity, sessionID: String) {
        guard let (session, account) = found else {
            throw .unauthenticated("The access token is invalid or has been replaced; sign in or refresh.")
        }
        guard session.revokedAt == nil else { throw Self.sessionRevoked }
        guard now() < session.accessExpires else {
            throw .unauthenticated("The access token has expired; refresh it.")
        }
        if let claims = session.claims { return (Self.identity(uid: session.uid, claims: claims, session: session), session.id) }
        guard let user = account else { throw .unauthenticated("The account no longer exists.") }
        guard !user.disabled else { throw .unauthenticated("The account has been disabled.") }
        return (Self.identity(user: user, session: session), session.id)
    }

    // MARK: The signed-in account

    /// Ends a session at once (its access and refresh tokens and its listeners). Idempotent.
    public func logOut(sessionID: String) async throws(HearthError) {
        guard let session = try await storage.session(id: sessionID) else { return }
        if try await storage.revokeSession(id: sessionID, at: now()) {
            revocations.publish(RevocationEvent(uid: session.uid, sessionIDs: [sessionID], reason: .loggedOut))
        }
    }

    /// The signed-in account.
    public func me(sessionID: String) async throws(HearthError) -> UserRecord {
        try await liveSession(sessionID).user
    }

    /// Deletes the signed-in account and every session of it. (Its documents stay, as in Firebase.)
    public func deleteAccount(sessionID: String) async throws(HearthError) {
        let (_, user) = try await liveSession(sessionID)
        _ = try await storage.deleteUser(uid: user.uid)
        revocations.publish(RevocationEvent(uid: user.uid, sessionIDs: nil, reason: .accountDeleted))
    }

    /// Changes the password after checking the current one; every other session of the account ends.
    public func changePassword(sessionID: String, currentPassword: String, newPassword: String,
                               clientAddress: String? = nil) async throws(HearthError) -> UserRecord {
        try PasswordPolicy.checkOffered(currentPassword, field: "currentPassword")
        try configuration.passwordPolicy.check(newPassword, field: "newPassword")
        let (session, signedIn) = try await liveSession(sessionID)
        var user = signedIn
        guard let stored = user.passwordHash else {
            throw .failedPrecondition("This account has no password to change; sign up with an email instead.")
        }
        let account = user.emailNormalized ?? "uid:" + user.uid
        if let wait = loginThrottle.withLock({ $0.retryAfter(account: account, address: clientAddress) }) {
            throw Self.tooManyAttempts(wait)
        }
        guard try await hasher.verify(currentPassword, against: stored) else {
            loginThrottle.withLock { $0.recordFailure(account: account, address: clientAddress) }
            throw .permissionDenied("currentPassword is incorrect.")
        }
        loginThrottle.withLock { $0.recordSuccess(account: account) }
        user.passwordHash = try await hasher.hash(newPassword)
        try await storage.updateUser(user)
        try await storage.deleteOneTimeTokens(uid: user.uid, purpose: .passwordReset)
        let ended = try await storage.revokeSessions(uid: user.uid, except: session.id, at: now())
        if !ended.isEmpty {
            revocations.publish(RevocationEvent(uid: user.uid, sessionIDs: Set(ended), reason: .passwordChanged))
        }
        return user
    }

    // MARK: Helpers shared by the flows

    /// Opens a new session for an account and answers its tokens.
    func openSession(for user: UserRecord) async throws(HearthError) -> SignInResult {
        let access = Tokens.generate(.access)
        let refresh = Tokens.generate(.refresh)
        let time = now()
        let session = SessionRecord(
            id: makeAutoID(), uid: user.uid, accessTokenHash: Tokens.hash(access), accessIssuedAt: time,
            accessExpires: time.adding(configuration.accessTokenLifetime),
            refreshTokenHash: Tokens.hash(refresh),
            refreshExpires: time.adding(configuration.refreshTokenLifetime),
            createdAt: time, provider: user.provider)
        try await storage.insertSession(session)
        return SignInResult(user: user, token: access, refreshToken: refresh,
                            expiresIn: configuration.accessTokenLifetime.components.seconds, sessionID: session.id)
    }

    /// Counts an account creation from a client address, refusing with `resource-exhausted` when that
    /// address made too many lately.
    func admitCreation(from clientAddress: String?) throws(HearthError) {
        guard let clientAddress else { return }
        let wait: Int? = creationThrottle.withLock { throttle in
            if let wait = throttle.retryAfter(account: nil, address: clientAddress) { return wait }
            throttle.recordFailure(account: nil, address: clientAddress)
            return nil
        }
        if let wait {
            throw .resourceExhausted("Too many accounts created from this address; try again in \(wait) seconds.",
                                     retryAfter: wait)
        }
    }

    /// The session (live: not revoked, access token unexpired) and its active account.
    func liveSession(_ sessionID: String) async throws(HearthError) -> (session: SessionRecord, user: UserRecord) {
        guard let session = try await storage.session(id: sessionID) else {
            throw .unauthenticated("The session does not exist; sign in again.")
        }
        guard session.revokedAt == nil else { throw Self.sessionRevoked }
        guard now() < session.accessExpires else {
            throw .unauthenticated("The access token has expired; refresh it.")
        }
        // An identity token acts as its uid for rules only, never on an account of that uid.
        guard session.claims == nil else { throw .permissionDenied("An identity token has no account to manage.") }
        return (session, try await activeUser(session.uid))
    }

    /// The account behind a session, which must still exist and be enabled.
    func activeUser(_ uid: String) async throws(HearthError) -> UserRecord {
        guard let user = try await storage.user(uid: uid) else {
            throw .unauthenticated("The account no longer exists.")
        }
        guard !user.disabled else { throw .unauthenticated("The account has been disabled.") }
        return user
    }

    private func revokeForReuse(_ session: SessionRecord, at time: Timestamp) async throws(HearthError) -> Never {
        if try await storage.revokeSession(id: session.id, at: time) {
            revocations.publish(RevocationEvent(uid: session.uid, sessionIDs: [session.id], reason: .refreshTokenReused))
        }
        throw .unauthenticated("The refresh token was already used, so the session has been revoked; sign in again.")
    }

    static func checkDisplayName(_ name: String?) throws(HearthError) -> String? {
        guard let name else { return nil }
        let trimmed = EmailAddress.trim(name)
        if trimmed.isEmpty { return nil }
        guard trimmed.utf8.count <= AuthLimits.maxDisplayNameBytes, trimmed.count <= AuthLimits.maxDisplayNameLength else {
            throw .invalidArgument("displayName must be at most \(AuthLimits.maxDisplayNameLength) characters "
                                   + "and \(AuthLimits.maxDisplayNameBytes) bytes of UTF-8")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArgument("displayName may not contain control characters")
        }
        return trimmed
    }

    static let emailTaken = HearthError.alreadyExists("An account with this email address already exists.")
    static let badCredentials = HearthError.unauthenticated("The email or password is incorrect.")
    static let sessionRevoked = HearthError.unauthenticated("The session has been revoked; sign in again.")

    static func tooManyAttempts(_ seconds: Int) -> HearthError {
        .resourceExhausted("Too many failed attempts; try again in \(seconds) seconds.", retryAfter: seconds)
    }
}
