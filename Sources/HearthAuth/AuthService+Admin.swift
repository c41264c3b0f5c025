import HearthCore

extension AuthService {
    /// An account to make with the admin key (or from a fixture file).
    public struct NewUser: Sendable, Equatable, CustomStringConvertible {
        /// The uid to use; a random one if nil.
        public var uid: String?
        /// The email, if any.
        public var email: String?
        /// The password, if any (hashed here; checked against the password policy).
        public var password: String?
        /// A name to show.
        public var displayName: String?
        /// Whether the email counts as verified.
        public var emailVerified: Bool
        /// Custom claims.
        public var claims: [String: Value]
        /// Whether the account starts disabled.
        public var disabled: Bool

        /// Redacted: the password never reaches a log through string interpolation.
        public var description: String {
            "NewUser(uid: \(uid ?? "<random>"), email: \(email ?? "<none>"), password: \(password == nil ? "<none>" : "<redacted>"))"
        }

        /// Makes a description of a new account.
        public init(uid: String? = nil, email: String? = nil, password: String? = nil, displayName: String? = nil,
                    emailVerified: Bool = false, claims: [String: Value] = [:], disabled: Bool = false) {
            self.uid = uid
            self.email = email
            self.password = password
            self.displayName = displayName
            self.emailVerified = emailVerified
            self.claims = claims
            self.disabled = disabled
        }
    }

    /// A page of accounts.
    public struct UserPage: Sendable, Equatable {
        /// The accounts, in uid order.
        public var users: [UserRecord]
        /// The token for the next page, or nil at the end.
        public var nextPageToken: String?

        /// The answer's JSON: `{"users": [...admin views...], "nextPageToken"?: ...}`.
        public var json: JSON {
            var pairs: [(String, JSON)] = [("users", .array(users.map(\.adminJSON)))]
            if let nextPageToken { pairs.append(("nextPageToken", .string(nextPageToken))) }
            return .object(pairs)
        }
    }

    /// Makes an account (admin). An account without email or password is a plain uid that only the admin
    /// can use, as in Firebase's `createUser`.
    public func createUser(_ new: NewUser) async throws(HearthError) -> UserRecord {
        let uid = new.uid ?? makeAutoID()
        try Self.validateUID(uid)
        let email = try new.email.map { (raw) throws(HearthError) in try EmailAddress(raw) }
        if let password = new.password {
            guard email != nil else { throw .invalidArgument("password needs an email to sign in with") }
            try configuration.passwordPolicy.check(password)
        }
        try Self.validateClaims(new.claims)
        let name = try Self.checkDisplayName(new.displayName)
        if let email, try await storage.user(emailNormalized: email.normalized) != nil { throw Self.emailTaken }
        var hash: String?
        if let password = new.password { hash = try await hasher.hash(password) }
        let user = UserRecord(uid: uid, email: email?.original, emailNormalized: email?.normalized,
                              passwordHash: hash, displayName: name, emailVerified: new.emailVerified,
                              anonymous: false, claims: new.claims, createdAt: now(), disabled: new.disabled)
        try await storage.insertUser(user)
        return user
    }

    /// One account (admin).
    public func user(uid: String) async throws(HearthError) -> UserRecord {
        guard let user = try await storage.user(uid: uid) else { throw Self.noSuchUser(uid) }
        return user
    }

    /// Accounts in uid order (admin); `pageToken` is the previous page's `nextPageToken`.
    public func listUsers(pageSize: Int? = nil, pageToken: String? = nil) async throws(HearthError) -> UserPage {
        let size = pageSize ?? Limits.defaultPageSize
        guard (1...AuthLimits.maxUserPageSize).contains(size) else {
            throw .invalidArgument("pageSize must be between 1 and \(AuthLimits.maxUserPageSize)")
        }
        var after: String?
        if let pageToken {
            guard let decoded = Base64.decode(pageToken), let uid = String(validating: decoded, as: UTF8.self) else {
                throw .invalidArgument("pageToken is not a token this server issued")
            }
            after = uid
        }
        // One extra row tells whether another page exists.
        var users = try await storage.listUsers(after: after, limit: size + 1)
        var next: String?
        if users.count > size {
            users.removeLast(users.count - size)
            next = Base64.encode(Array(users[users.count - 1].uid.utf8))
        }
        return UserPage(users: users, nextPageToken: next)
    }

    /// Deletes an account and ends its sessions (admin).
    public func deleteUser(uid: String) async throws(HearthError) {
        guard try await storage.deleteUser(uid: uid) != nil else { throw Self.noSuchUser(uid) }
        revocations.publish(RevocationEvent(uid: uid, sessionIDs: nil, reason: .accountDeleted))
    }

    /// Replaces an account's custom claims (admin). They apply to the next `authenticate` at once; live
    /// listeners hear `identityChanged`.
    @discardableResult
    public func setClaims(uid: String, claims: [String: Value]) async throws(HearthError) -> UserRecord {
        try Self.validateClaims(claims)
        var user = try await user(uid: uid)
        user.claims = claims
        try await storage.updateUser(user)
        revocations.publish(RevocationEvent(uid: uid, sessionIDs: nil, reason: .identityChanged))
        return user
    }

    /// Disables or enables an account (admin); disabling ends its sessions.
    @discardableResult
    public func setDisabled(uid: String, _ disabled: Bool) async throws(HearthError) -> UserRecord {
        var user = try await user(uid: uid)
        guard user.disabled != disabled else { return user }
        user.disabled = disabled
        try await storage.updateUser(user)
        if disabled {
            _ = try await storage.revokeSessions(uid: uid, except: nil, at: now())
            revocations.publish(RevocationEvent(uid: uid, sessionIDs: nil, reason: .accountDisabled))
        }
        return user
    }

    /// Ends every session of an account (admin); answers how many were live.
    @discardableResult
    public func revokeSessions(uid: String) async throws(HearthError) -> Int {
        _ = try await user(uid: uid)
        let ended = try await storage.revokeSessions(uid: uid, except: nil, at: now())
        revocations.publish(RevocationEvent(uid: uid, sessionIDs: nil, reason: .revokedByAdmin))
        return ended.count
    }

    /// Checks a uid: a valid document id (rules build paths like `users/$(request.auth.uid)`) of at most
    /// `AuthLimits.maxUIDBytes` bytes.
    public static func validateUID(_ uid: String) throws(HearthError) {
        guard !uid.isEmpty, uid.utf8.count <= AuthLimits.maxUIDBytes else {
            throw .invalidArgument("uid must be 1 to \(AuthLimits.maxUIDBytes) bytes")
        }
        try validateID(uid, kind: "uid")
    }

    static func noSuchUser(_ uid: String) -> HearthError { .notFound("No account with uid '\(uid)'.") }
}
