/// News that sessions stopped working (or that an account's identity changed), so the live-update layer
/// can close or refresh the listeners those sessions opened at once.
public struct RevocationEvent: Sendable, Hashable {
    /// Why it happened.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// The session signed out.
        case loggedOut = "logged-out"
        /// An already-used refresh token was presented: the token family is presumed stolen.
        case refreshTokenReused = "refresh-token-reused"
        /// The password changed; other sessions end.
        case passwordChanged = "password-changed"
        /// The password was reset by email; every session ends.
        case passwordReset = "password-reset"
        /// The account was deleted.
        case accountDeleted = "account-deleted"
        /// The admin disabled the account.
        case accountDisabled = "account-disabled"
        /// The admin revoked the sessions.
        case revokedByAdmin = "revoked-by-admin"
        /// Not a revocation: claims, email or verification changed. Sessions stay valid, but an identity a
        /// listener captured earlier is stale and should be fetched again with `authenticate`.
        case identityChanged = "identity-changed"
        /// Not a revocation: news of some revocations was lost (a subscriber fell too far behind), so every
        /// session, of any account, must be looked up again; those that no longer work end with `sessionEnded`.
        case sessionsUnknown = "sessions-unknown"
        /// A session found not to work any more when sessions were looked up again after `sessionsUnknown`.
        case sessionEnded = "session-ended"
    }

    /// Every session of every account must be looked up again (see `Reason.sessionsUnknown`).
    public static let sessionsUnknown = RevocationEvent(uid: "", sessionIDs: nil, reason: .sessionsUnknown)

    /// Whose sessions.
    public var uid: String
    /// The sessions concerned; nil means every session of `uid`.
    public var sessionIDs: Set<String>?
    /// Why.
    public var reason: Reason

    /// Makes an event.
    public init(uid: String, sessionIDs: Set<String>?, reason: Reason) {
        self.uid = uid
        self.sessionIDs = sessionIDs
        self.reason = reason
    }

    /// True when the event concerns a listener opened by this session of this account.
    public func affects(sessionID: String, uid: String) -> Bool {
        if reason == .sessionsUnknown { return true }
        guard uid == self.uid else { return false }
        return sessionIDs.map { $0.contains(sessionID) } ?? true
    }

    /// True when the sessions concerned no longer work (every reason but `identityChanged`).
    public var revokes: Bool { reason != .identityChanged && reason != .sessionsUnknown }
}
