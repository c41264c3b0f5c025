import HearthCore

/// A stored single-use token (password reset or email verification), kept only as its hash.
public struct OneTimeTokenRecord: Sendable, Equatable {
    /// What a one-time token is for.
    public enum Purpose: String, Sendable, Hashable, CaseIterable {
        /// Sets a new password.
        case passwordReset = "password-reset"
        /// Marks the email as verified.
        case emailVerification = "email-verification"
    }

    /// SHA-256 of the token; the primary key.
    public var tokenHash: TokenHash
    /// What it is for.
    public var purpose: Purpose
    /// Whose account it acts on.
    public var uid: String
    /// The normalized email it was sent to; the token only works while the account still has that email.
    public var emailNormalized: String
    /// When it was issued.
    public var createdAt: Timestamp
    /// When it stops working.
    public var expiresAt: Timestamp

    /// Makes a record.
    public init(tokenHash: TokenHash, purpose: Purpose, uid: String, emailNormalized: String,
                createdAt: Timestamp, expiresAt: Timestamp) {
        self.tokenHash = tokenHash
        self.purpose = purpose
        self.uid = uid
        self.emailNormalized = emailNormalized
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
