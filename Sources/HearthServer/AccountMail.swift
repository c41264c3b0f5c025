import Foundation
import HearthAuth
import HearthCore
import NIOConcurrencyHelpers

/// The one place the accounts' messages are written: their link to the server's `/auth/action` page and
/// their subject, text and HTML from the templates. SMTP delivery and the development mailbox both use it.
final class AccountMail: Sendable {
    /// What a message says.
    struct Content: Sendable, Equatable {
        var link: String
        var subject: String
        var text: String
        var html: String
    }

    let templates: MailTemplates
    let appName: String
    /// The configured public address, or nil to use the listening address once it is known.
    private let publicURL: String?
    private let listening = NIOLockedValueBox<String?>(nil)

    init(templates: MailTemplates, appName: String, publicURL: String?) {
        self.templates = templates
        self.appName = appName
        self.publicURL = publicURL
    }

    /// Checks a configured public URL (`http(s)://host[:port][/path]`, no query or fragment) and answers it
    /// without a trailing slash.
    static func publicBase(_ text: String) throws(HearthError) -> String {
        let problem = HearthError.invalidArgument(
            "publicUrl: '\(text.prefix(200))' is not an address like https://hearth.example.com (http or https, no query or fragment)")
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil, url.user == nil
        else { throw problem }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// Records where the server listens, the links' base when no public URL is configured.
    func serverListening(host: String, port: Int, secure: Bool) {
        listening.withLockedValue { $0 = loopbackURL(host: host, port: port, secure: secure) }
    }

    /// The address links start with, without a trailing slash.
    var base: String { publicURL ?? listening.withLockedValue { $0 } ?? "http://127.0.0.1" }

    /// The page a message's code opens: `BASE/auth/action?mode=…&code=…`.
    func link(for message: OutboxMessage) -> String {
        let mode = message.purpose == .passwordReset ? ActionPages.Mode.resetPassword : .verifyEmail
        return "\(base)\(ActionPages.path)?mode=\(mode.rawValue)&code=\(Self.queryEscaped(message.token))"
    }

    /// An account message's content (nil for an app email, which comes whole).
    func content(for message: OutboxMessage) -> Content? {
        let (subject, text, html): (MailTemplates.Name, MailTemplates.Name, MailTemplates.Name)
        switch message.purpose {
        case .email: return nil
        case .passwordReset: (subject, text, html) = (.resetPasswordSubject, .resetPasswordText, .resetPasswordHTML)
        case .emailVerification: (subject, text, html) = (.verifyEmailSubject, .verifyEmailText, .verifyEmailHTML)
        }
        let link = link(for: message)
        let values: [String: Any] = [
            "appName": appName, "email": message.to, "link": link, "code": message.token,
            "expiresAt": Self.minute(message.expiresAt), "expiresIn": Self.span(from: message.createdAt, to: message.expiresAt),
        ]
        // A subject is one line whatever the template's line breaks.
        let rendered = templates.render(subject, values)
        let oneLine = rendered.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
        return Content(link: link, subject: oneLine, text: templates.render(text, values), html: templates.render(html, values))
    }

    /// "2026-11-26 23:56 UTC": the expiry as a person reads it, to the minute (rounded down, so never late).
    static func minute(_ time: Timestamp) -> String {
        let text = time.rfc3339
        return text.count >= 16 ? text.prefix(16).replacingOccurrences(of: "T", with: " ") + " UTC" : text
    }

    /// "1 hour", "3 days", "90 seconds": a lifetime as a person reads it.
    static func span(from start: Timestamp, to end: Timestamp) -> String {
        let seconds = max(0, (end.microseconds - start.microseconds + 500_000) / 1_000_000)
        for (unit, size) in [("day", Int64(86_400)), ("hour", 3_600), ("minute", 60)] where seconds >= size && seconds % size == 0 {
            let count = seconds / size
            return "\(count) \(unit)\(count == 1 ? "" : "s")"
        }
        return "\(seconds) second\(seconds == 1 ? "" : "s")"
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    static func queryEscaped(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
