import HearthCore

/// A stored account. Shaped as one table row: the email's normalized form is the unique key.
public struct UserRecord: Sendable, Equatable, CustomStringConvertible {
    /// The account's id (`request.auth.uid`).
    public var uid: String
    /// The email as given, or nil for anonymous accounts.
    public var email: String?
    /// The lowercased email, unique across accounts; nil for anonymous accounts.
    public var emailNormalized: String?
    /// The Argon2id PHC string, or nil when the account has no password (anonymous, or admin-made).
    public var passwordHash: String?
    /// A name to show, if any.
    public var displayName: String?
    /// Whether the owner proved they receive mail at `email`.
    public var emailVerified: Bool
    /// True for accounts made by anonymous sign-in.
    public var anonymous: Bool
    /// Custom claims, merged into `request.auth.token`.
    public var claims: [String: Value]
    /// When the account was made.
    public var createdAt: Timestamp
    /// A disabled account cannot sign in and its sessions stop working.
    public var disabled: Bool

    /// Makes a record.
    public init(uid: String, email: String? = nil, emailNormalized: String? = nil, passwordHash: String? = nil,
                displayName: String? = nil, emailVerified: Bool = false, anonymous: Bool = false,
                claims: [String: Value] = [:], createdAt: Timestamp, disabled: Bool = false) {
        self.uid = uid
        self.email = email
        self.emailNormalized = emailNormalized
        self.passwordHash = passwordHash
        self.displayName = displayName
        self.emailVerified = emailVerified
        self.anonymous = anonymous
        self.claims = claims
        self.createdAt = createdAt
        self.disabled = disabled
    }

    /// Without the password hash, which is worth an offline guessing attack to whoever reads a log.
    public var description: String {
        "UserRecord(uid: \(uid), email: \(email ?? "<none>"), anonymous: \(anonymous), disabled: \(disabled))"
    }

    /// The sign-in provider rules see as `firebase.sign_in_provider`.
    public var provider: SignInProvider { anonymous ? .anonymous : .password }

    /// The public view, the `user` of docs/api.md: `{uid, email, emailVerified, displayName, anonymous,
    /// createdAt}`.
    /// The password hash and claims never leave through it.
    public var json: JSON {
        .object([
            ("uid", .string(uid)),
            ("email", email.map(JSON.string) ?? .null),
            ("emailVerified", .bool(emailVerified)),
            ("displayName", displayName.map(JSON.string) ?? .null),
            ("anonymous", .bool(anonymous)),
            ("createdAt", .string(createdAt.rfc3339)),
        ])
    }

    /// The admin view: the public view plus `disabled` and the custom claims (never the password hash).
    public var adminJSON: JSON {
        guard case .object(var pairs) = json else { return json }
        pairs.append(("disabled", .bool(disabled)))
        var w = JSONWriter()
        Value.writeFields(claims, to: &w)
        // Claims are wire-encoded values; re-parsing our own canonical output cannot fail.
        pairs.append(("claims", (try? JSON.parse(w.bytes)) ?? .object([])))
        return .object(pairs)
    }
}

/// How a session was opened; rules see it as `request.auth.token.firebase.sign_in_provider`.
public enum SignInProvider: String, Sendable, Hashable, CaseIterable {
    /// Email and password.
    case password
    /// Anonymous sign-in.
    case anonymous
    /// A token the server issued for a declared identity (a functions endpoint's), as Firebase's custom
    /// tokens are: its uid needs no account, its claims are the session's own.
    case custom
}
