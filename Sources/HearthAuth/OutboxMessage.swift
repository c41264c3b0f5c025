import HearthCore

/// A message waiting to be delivered (logged in development, mailed by a hook later).
///
/// It necessarily carries the plaintext one-time token, since the recipient needs it; storage should delete
/// a message once delivered. Only the outbox ever holds a token in clear.
public struct OutboxMessage: Sendable, Equatable, CustomStringConvertible {
    /// The message's id.
    public var id: String
    /// What it is for.
    public var purpose: OneTimeTokenRecord.Purpose
    /// The address to deliver to (as the user wrote it).
    public var to: String
    /// The account it concerns.
    public var uid: String
    /// The one-time token the recipient will present.
    public var token: String
    /// When the token expires, for the message text.
    public var expiresAt: Timestamp
    /// When it was queued.
    public var createdAt: Timestamp

    /// Makes a message.
    public init(id: String, purpose: OneTimeTokenRecord.Purpose, to: String, uid: String, token: String,
                expiresAt: Timestamp, createdAt: Timestamp) {
        self.id = id
        self.purpose = purpose
        self.to = to
        self.uid = uid
        self.token = token
        self.expiresAt = expiresAt
        self.createdAt = createdAt
    }

    /// Redacted: the token never reaches a log through string interpolation.
    public var description: String {
        "OutboxMessage(id: \(id), purpose: \(purpose.rawValue), uid: \(uid), token: <redacted>)"
    }
}
