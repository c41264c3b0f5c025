#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthAuth
import HearthCore

/// The development mailbox: each delivered outbox message becomes one JSON line in `DATA/outbox.ndjson`,
/// a file only the server's user may read (mode 0600). There a developer, a test or a mail-forwarding
/// script picks up reset and verification links; the logs only ever say that a message went out.
public struct OutboxFile: Sendable {
    /// The file's name inside the data folder.
    public static let fileName = "outbox.ndjson"
    /// The file's path.
    public let path: String

    /// The mailbox of a data folder.
    public init(dataDirectory: String) {
        path = dataDirectory.hasSuffix("/") ? dataDirectory + Self.fileName : dataDirectory + "/" + Self.fileName
    }

    /// Appends a message as one line: `{"id", "purpose", "to", "uid", "token", "link", "expiresAt",
    /// "createdAt", "subject", "text", "html"}` for an account message (its `content`, as the templates
    /// write it), `{"id", "purpose": "email", "to", "subject", "text", "html"?, "createdAt"}` for an app
    /// email. False when it could not be written (the message then stays in the outbox for the next delivery).
    func append(_ message: OutboxMessage, content: AccountMail.Content?) -> Bool {
        let line = Self.line(message, content: content)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // An existing file keeps its mode on open; tighten it, since it holds live tokens.
        _ = fchmod(fd, 0o600)
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return written == line.count && fsync(fd) == 0
    }

    static func line(_ message: OutboxMessage, content: AccountMail.Content?) -> [UInt8] {
        if let email = message.email {
            var fields: [(String, JSON)] = [
                ("id", .string(message.id)), ("purpose", .string(message.purpose.rawValue)), ("to", .string(message.to)),
                ("subject", .string(email.subject)), ("text", .string(email.text)),
            ]
            if let html = email.html { fields.append(("html", .string(html))) }
            fields.append(("createdAt", .string(message.createdAt.rfc3339)))
            return JSON.object(fields).serialized() + [UInt8(ascii: "\n")]
        }
        var fields: [(String, JSON)] = [
            ("id", .string(message.id)),
            ("purpose", .string(message.purpose.rawValue)),
            ("to", .string(message.to)),
            ("uid", .string(message.uid)),
            ("token", .string(message.token)),
        ]
        if let content { fields.append(("link", .string(content.link))) }
        fields += [("expiresAt", .string(message.expiresAt.rfc3339)), ("createdAt", .string(message.createdAt.rfc3339))]
        if let content {
            fields += [("subject", .string(content.subject)), ("text", .string(content.text)), ("html", .string(content.html))]
        }
        var bytes = JSON.object(fields).serialized()
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
