import HearthCore

/// A message waiting in the outbox: an account message (password reset, email verification) whose text
/// is written when it is sent, or an app email given whole. Each message has one recipient; an app email
/// to several addresses is queued as one message per address, so each is delivered, retried or given up
/// on by itself.
///
/// An account message necessarily carries the plaintext one-time token, since the recipient needs it;
/// storage keeps it sealed (`OutboxSeal`) and deletes the message once delivered.
public struct OutboxMessage: Sendable, Equatable, CustomStringConvertible {
    /// What a message is.
    public enum Purpose: String, Sendable, Hashable, CaseIterable {
        /// A password-reset link.
        case passwordReset = "password-reset"
        /// An email-verification link.
        case emailVerification = "email-verification"
        /// An app email (`POST /v1/messages/email`).
        case email

        /// The purpose of an account message for a one-time token.
        public init(_ token: OneTimeTokenRecord.Purpose) {
            self = token == .passwordReset ? .passwordReset : .emailVerification
        }
    }

    /// The content of an app email.
    public struct Email: Sendable, Equatable {
        /// Every address of the request, shown in `To` (the message goes to `OutboxMessage.to` only).
        public var to: [String]
        /// The subject.
        public var subject: String
        /// The plain-text body.
        public var text: String
        /// The HTML alternative, if any.
        public var html: String?

        /// Makes the content.
        public init(to: [String], subject: String, text: String, html: String?) {
            self.to = to
            self.subject = subject
            self.text = text
            self.html = html
        }
    }

    /// Where a message stands in delivery.
    public struct Delivery: Sendable, Equatable {
        /// Attempts made so far.
        public var attempts: Int
        /// Not to be tried before this time.
        public var nextAttemptAt: Timestamp
        /// Why the last attempt failed, if one did.
        public var lastError: String?
        /// When it was given up on; nil while it is pending.
        public var deadAt: Timestamp?

        /// A message not yet tried.
        public static let new = Delivery(attempts: 0, nextAttemptAt: Timestamp(microseconds: 0), lastError: nil, deadAt: nil)

        /// Makes a state.
        public init(attempts: Int, nextAttemptAt: Timestamp, lastError: String?, deadAt: Timestamp?) {
            self.attempts = attempts
            self.nextAttemptAt = nextAttemptAt
            self.lastError = lastError
            self.deadAt = deadAt
        }
    }

    /// The message's id (also the local part of its `Message-ID`).
    public var id: String
    /// What it is for.
    public var purpose: Purpose
    /// The one address to deliver to (as the user wrote it).
    public var to: String
    /// The account it concerns (empty for an app email).
    public var uid: String
    /// The one-time token the recipient will present (empty for an app email).
    public var token: String
    /// When the token expires, for the message text (the queueing time for an app email).
    public var expiresAt: Timestamp
    /// When it was queued.
    public var createdAt: Timestamp
    /// An app email's content; nil for an account message.
    public var email: Email?
    /// Where it stands in delivery.
    public var delivery: Delivery

    /// Makes a message.
    public init(id: String, purpose: Purpose, to: String, uid: String, token: String,
                expiresAt: Timestamp, createdAt: Timestamp, email: Email? = nil, delivery: Delivery = .new) {
        self.id = id
        self.purpose = purpose
        self.to = to
        self.uid = uid
        self.token = token
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.email = email
        self.delivery = delivery
    }

    /// Redacted: the token never reaches a log through string interpolation.
    public var description: String {
        "OutboxMessage(id: \(id), purpose: \(purpose.rawValue), uid: \(uid), token: <redacted>)"
    }
}
