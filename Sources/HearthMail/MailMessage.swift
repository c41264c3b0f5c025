import HearthCore

/// One email, built into the bytes of an RFC 5322 message: `From`, `To`, `Subject` (RFC 2047 encoded
/// words when not plain ASCII), `Date`, `Message-ID`, `MIME-Version`, and a UTF-8 text body in
/// quoted-printable, or `multipart/alternative` with an HTML part when `html` is given. Lines end in CRLF.
public struct MailMessage: Sendable, Equatable {
    /// The sender (the header's and the envelope's).
    public var from: MailAddress
    /// The recipients shown in `To`.
    public var to: [MailAddress]
    /// The subject; a line break in it is refused.
    public var subject: String
    /// The plain-text body.
    public var text: String
    /// An HTML alternative of the body, if any.
    public var html: String?
    /// The `Message-ID` without angle brackets (`id@host`); stable across retries so that a copy sent twice
    /// can be recognised.
    public var messageID: String
    /// When it was written (the `Date` header).
    public var date: Timestamp

    /// Makes a message; `render` checks it.
    public init(from: MailAddress, to: [MailAddress], subject: String, text: String, html: String? = nil,
                messageID: String, date: Timestamp) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.messageID = messageID
        self.date = date
    }

    /// The message's bytes, ready for DATA (before dot-stuffing). Refuses a subject or display name with
    /// a line break (header injection) and a message with no recipient.
    public func render() throws(HearthError) -> [UInt8] {
        if MailHeader.hasLineBreak(subject) {
            throw .invalidArgument("subject: a line break in the subject is refused (header injection)")
        }
        for a in [from] + to where a.displayName.map(MailHeader.hasLineBreak) == true {
            throw .invalidArgument("displayName: a line break in a display name is refused (header injection)")
        }
        guard !to.isEmpty else { throw .invalidArgument("to: at least one recipient is required") }
        guard messageID.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "<" && $0 != ">" }),
              messageID.contains("@") else { throw .invalidArgument("messageID: '\(messageID)' is not id@host") }
        var out = ""
        out += MailHeader.fold("From: " + MailHeader.mailbox(from))
        out += MailHeader.fold("To: " + to.map(MailHeader.mailbox).joined(separator: ", "))
        out += MailHeader.fold("Subject: " + MailHeader.encodedText(subject))
        out += "Date: \(MailHeader.date(date))\r\n"
        out += "Message-ID: <\(messageID)>\r\n"
        out += "MIME-Version: 1.0\r\n"
        if let html {
            let boundary = "=_hearth_" + String(Self.fnv1a(messageID), radix: 36) + "_alt"
            out += "Content-Type: multipart/alternative; boundary=\"\(boundary)\"\r\n\r\n"
            out += "This is a multi-part message in MIME format.\r\n"
            out += "--\(boundary)\r\n" + Self.part(text, type: "text/plain")
            out += "--\(boundary)\r\n" + Self.part(html, type: "text/html")
            out += "--\(boundary)--\r\n"
        } else {
            out += Self.part(text, type: "text/plain")
        }
        return Array(out.utf8)
    }

    /// A boundary derived from the message id, so the same message renders to the same bytes.
    private static func fnv1a(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    private static func part(_ body: String, type: String) -> String {
        "Content-Type: \(type); charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            + QuotedPrintable.encode(body) + "\r\n"
    }
}

/// Header encodings: RFC 2047 encoded words, quoting of display names, folding, the RFC 5322 date.
public enum MailHeader {
    /// True when text holds a CR or LF, which would end a header line early (header injection). Checked on
    /// scalars: "\r\n" is one `Character`.
    public static func hasLineBreak(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 == "\r" || $0 == "\n" }
    }

    /// A display name and address: a plain name as an atom sequence or quoted string, anything else as
    /// encoded words.
    static func mailbox(_ a: MailAddress) -> String {
        guard let name = a.displayName else { return "<\(a.address)>" }
        return "\(phrase(name)) <\(a.address)>"
    }

    static func phrase(_ name: String) -> String {
        let printable = name.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        guard printable else { return encodedWords(name) }
        let atext = name.unicodeScalars.allSatisfy {
            $0.properties.isAlphabetic || ("0"..."9").contains($0) || " !#$%&'*+-/=?^_`{|}~".unicodeScalars.contains($0)
        }
        if atext, !name.hasPrefix(" "), !name.hasSuffix(" "), !name.contains("  ") { return name }
        return "\"" + name.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
    }

    /// Unstructured text (the subject): as is when printable ASCII, otherwise encoded words.
    static func encodedText(_ text: String) -> String {
        let printable = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        return printable && !text.contains("=?") ? text : encodedWords(text)
    }

    /// `=?utf-8?B?...?=` words of at most 75 characters, split between whole characters, joined by a
    /// folding space (which a reader drops between adjacent encoded words).
    static func encodedWords(_ text: String) -> String {
        let maxBytes = 45  // 45 bytes are 60 base64 characters: 12 + 60 ≤ 75
        var words: [String] = []
        var chunk: [UInt8] = []
        for c in text {
            let bytes = Array(String(c).utf8)
            if chunk.count + bytes.count > maxBytes, !chunk.isEmpty {
                words.append("=?utf-8?B?" + Base64.encode(chunk) + "?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?utf-8?B?" + Base64.encode(chunk) + "?=") }
        return words.joined(separator: "\r\n ")
    }

    /// One header line, folded at spaces so that no line is much longer than 78 characters, ending in CRLF.
    static func fold(_ line: String) -> String {
        if line.utf8.count <= 78 || line.contains("\r\n") { return line + "\r\n" }
        var out = ""
        var current = ""
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            if !current.isEmpty, current.utf8.count + 1 + word.utf8.count > 78 {
                out += current + "\r\n"
                current = " " + word
            } else {
                current += current.isEmpty ? String(word) : " " + word
            }
        }
        return out + current + "\r\n"
    }

    /// RFC 5322 date in UTC: `Thu, 26 Nov 2026 19:49:02 +0000`.
    static func date(_ t: Timestamp) -> String {
        let seconds = t.microseconds >= 0 ? t.microseconds / 1_000_000 : (t.microseconds - 999_999) / 1_000_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = CivilCalendar.civil(fromDays: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]
        let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(m - 1)]
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(d) \(month) \(y) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) +0000"
    }
}

/// Quoted-printable (RFC 2045 §6.7) of UTF-8 text: line breaks become CRLF, lines are soft-broken before 76
/// characters, `=`, non-ASCII and trailing spaces are escaped. A line that is a lone `.` needs no escape
/// here: the SMTP client dot-stuffs.
enum QuotedPrintable {
    static func encode(_ text: String) -> String {
        let normalized = text.replacingAll("\r\n", with: "\n").replacingAll("\r", with: "\n")
        var lines: [String] = []
        for line in normalized.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var out = ""
            var length = 0
            for (i, b) in bytes.enumerated() {
                let last = i == bytes.count - 1
                let plain = (b >= 33 && b <= 126 && b != UInt8(ascii: "=")) || ((b == 32 || b == 9) && !last)
                let piece = plain ? String(UnicodeScalar(b)) : "=" + hex(b)
                if length + piece.count > 75 {
                    out += "=\r\n"
                    length = 0
                }
                out += piece
                length += piece.count
            }
            lines.append(out)
        }
        return lines.joined(separator: "\r\n")
    }

    private static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
