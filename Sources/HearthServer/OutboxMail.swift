import HearthAuth
import HearthCore
import HearthMail

/// The email an outbox message becomes: an app email as given, an account message as a short text with
/// its one-time code. The `Message-ID` comes from the message's id, so a copy sent twice is recognisable.
enum OutboxMail {
    static func message(for queued: OutboxMessage, from: MailAddress) throws(HearthError) -> MailMessage {
        let domain = from.address.split(separator: "@").last.map(String.init) ?? "hearth.invalid"
        let messageID = "\(queued.id)@\(domain)"
        let to = try MailAddress(queued.to, field: "to")
        switch queued.purpose {
        case .email:
            guard let email = queued.email else { throw .internal("An app email lost its content.") }
            let shown = try email.to.map { (address) throws(HearthError) in try MailAddress(address, field: "to") }
            return MailMessage(from: from, to: shown.isEmpty ? [to] : shown, subject: email.subject, text: email.text,
                               html: email.html, messageID: messageID, date: queued.createdAt)
        case .passwordReset:
            return MailMessage(from: from, to: [to], subject: "Reset your password", text: """
                Someone asked to reset the password of the account for \(queued.to).

                Your password-reset code: \(queued.token)

                It works once, until \(queued.expiresAt.rfc3339). If you did not ask for this, ignore this message.
                """, messageID: messageID, date: queued.createdAt)
        case .emailVerification:
            return MailMessage(from: from, to: [to], subject: "Verify your email address", text: """
                Please confirm that \(queued.to) is your address.

                Your verification code: \(queued.token)

                It works once, until \(queued.expiresAt.rfc3339).
                """, messageID: messageID, date: queued.createdAt)
        }
    }
}
