import HearthAuth
import HearthCore
import HearthMail

/// The email an outbox message becomes: an app email as given, an account message as `AccountMail` writes
/// it from the templates. The `Message-ID` comes from the message's id, so a copy sent twice is recognisable.
enum OutboxMail {
    static func message(for queued: OutboxMessage, from: MailAddress, accountMail: AccountMail) throws(HearthError) -> MailMessage {
        let domain = from.address.split(separator: "@").last.map(String.init) ?? "hearth.invalid"
        let messageID = "\(queued.id)@\(domain)"
        let to = try MailAddress(queued.to, field: "to")
        if let content = accountMail.content(for: queued) {
            return MailMessage(from: from, to: [to], subject: content.subject, text: content.text, html: content.html,
                               messageID: messageID, date: queued.createdAt)
        }
        guard let email = queued.email else { throw .internal("An app email lost its content.") }
        let shown = try email.to.map { (address) throws(HearthError) in try MailAddress(address, field: "to") }
        return MailMessage(from: from, to: shown.isEmpty ? [to] : shown, subject: email.subject, text: email.text,
                           html: email.html, messageID: messageID, date: queued.createdAt)
    }
}
