import HearthAuth
import HearthCore
import HearthMail

/// The body of `POST /v1/messages/email`: `{"to": [addresses], "subject", "text", "html"?}`, checked
/// whole before anything is queued.
struct AppEmailRequest {
    /// Most recipients of one request.
    static let maxRecipients = 50
    /// Longest subject, in UTF-8 bytes.
    static let maxSubjectBytes = 998
    /// Largest text plus HTML, in UTF-8 bytes.
    static let maxBodyBytes = 1 << 20

    let email: OutboxMessage.Email

    init(json: JSON) throws(HearthError) {
        guard case .object(let pairs) = json else { throw .invalidArgument("the body must be a JSON object") }
        let known: Set = ["to", "subject", "text", "html"]
        if let unknown = pairs.first(where: { !known.contains($0.0) }) {
            throw .invalidArgument("unknown field '\(unknown.0)'; known: to, subject, text, html")
        }
        guard case .array(let list)? = json["to"], !list.isEmpty else {
            throw .invalidArgument("to: a non-empty array of addresses is required")
        }
        guard list.count <= Self.maxRecipients else {
            throw .invalidArgument("to: at most \(Self.maxRecipients) addresses, got \(list.count)")
        }
        var to: [String] = []
        for (i, item) in list.enumerated() {
            guard case .string(let text) = item else { throw .invalidArgument("to[\(i)]: an address string is required") }
            let address = try MailAddress(text, field: "to[\(i)]")
            if !to.contains(address.address) { to.append(address.address) }
        }
        guard case .string(let subject)? = json["subject"], !subject.isEmpty else {
            throw .invalidArgument("subject: a non-empty string is required")
        }
        guard subject.utf8.count <= Self.maxSubjectBytes else {
            throw .invalidArgument("subject: at most \(Self.maxSubjectBytes) bytes")
        }
        if MailHeader.hasLineBreak(subject) {
            throw .invalidArgument("subject: a line break in the subject is refused (header injection)")
        }
        guard case .string(let text)? = json["text"] else { throw .invalidArgument("text: a string is required") }
        var html: String?
        switch json["html"] {
        case nil, .null?: html = nil
        case .string(let h)?: html = h
        default: throw .invalidArgument("html: a string is required when given")
        }
        guard text.utf8.count + (html?.utf8.count ?? 0) <= Self.maxBodyBytes else {
            throw .payloadTooLarge("text and html together are over \(Self.maxBodyBytes) bytes")
        }
        email = OutboxMessage.Email(to: to, subject: subject, text: text, html: html)
    }
}
