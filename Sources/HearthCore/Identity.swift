/// Who is making a request: the server's owner (the admin key), nobody, or a signed-in user.
/// Every engine call takes one, so that rules apply without changing call sites.
public enum Identity: Sendable, Equatable {
    /// The admin key: bypasses rules, like Firebase's Admin SDK.
    case admin
    /// No credentials.
    case unauthenticated
    /// A signed-in user; `token` is the claims map rules see as `request.auth.token`.
    case user(uid: String, token: [String: Value])

    /// True for the admin key.
    public var isAdmin: Bool {
        if case .admin = self { return true }
        return false
    }

    /// The signed-in user's id, if any.
    public var uid: String? {
        if case .user(let uid, _) = self { return uid }
        return nil
    }
}
