import HearthCore

/// Where and how to reach the SMTP server: `smtp://[user:password@]host[:port][?starttls=required]`
/// (plain, upgraded with STARTTLS when the server offers it; port 25 by default) or
/// `smtps://[user:password@]host[:port]` (TLS from the first byte; port 465). User and password are
/// percent-decoded and sent with AUTH PLAIN or LOGIN, only over TLS unless `allowPlainAuth` is set.
public struct SMTPURL: Sendable, Equatable, CustomStringConvertible {
    /// How the connection is secured.
    public enum Security: String, Sendable, Equatable {
        /// STARTTLS when the server offers it, plain otherwise.
        case startTLSIfOffered
        /// STARTTLS or fail: a server that does not offer it is a permanent error.
        case startTLSRequired
        /// TLS from the first byte (`smtps://`).
        case implicitTLS
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// How the connection is secured.
    public var security: Security
    /// The user for AUTH, if any.
    public var user: String?
    /// The password for AUTH, if any.
    public var password: String?

    /// Parses a URL; a clear `invalid-argument` error names what is wrong with it.
    public init(_ text: String) throws(HearthError) {
        func bad(_ why: String) -> HearthError {
            .invalidArgument("smtpUrl: \(why); expected smtp://[user:password@]host[:port] or smtps://…")
        }
        guard let schemeEnd = text.firstRange(of: "://") else { throw bad("no scheme") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        var rest = Substring(text[schemeEnd.upperBound...])
        var query: Substring = ""
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/") else { throw bad("a path is not allowed") }
        switch scheme {
        case "smtp": security = .startTLSIfOffered; port = 25
        case "smtps": security = .implicitTLS; port = 465
        default: throw bad("unknown scheme '\(scheme)'")
        }
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = info.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let u = Self.percentDecoded(parts[0]), !u.isEmpty else { throw bad("the user is empty or badly escaped") }
            user = u
            if parts.count == 2 {
                guard let p = Self.percentDecoded(parts[1]) else { throw bad("the password is badly escaped") }
                password = p
            } else {
                password = ""
            }
        }
        var hostPart = rest
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else { throw bad("an IPv6 address lacks its ']'") }
            host = String(hostPart[hostPart.index(after: hostPart.startIndex)..<close])
            hostPart = hostPart[hostPart.index(after: close)...]
            if !hostPart.isEmpty {
                guard hostPart.hasPrefix(":") else { throw bad("unexpected text after the host") }
                port = try Self.port(hostPart.dropFirst(), bad)
            }
        } else if let colon = hostPart.lastIndex(of: ":") {
            host = String(hostPart[..<colon])
            port = try Self.port(hostPart[hostPart.index(after: colon)...], bad)
        } else {
            host = String(hostPart)
        }
        guard !host.isEmpty else { throw bad("no host") }
        guard host.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw bad("the host has spaces or non-ASCII characters")
        }
        for pair in query.split(separator: "&") where !pair.isEmpty {
            switch pair.lowercased() {
            case "starttls=required":
                guard security != .implicitTLS else { throw bad("starttls=required does not apply to smtps://") }
                security = .startTLSRequired
            case "starttls=optional":
                guard security != .implicitTLS else { throw bad("starttls=optional does not apply to smtps://") }
                security = .startTLSIfOffered
            default: throw bad("unknown option '\(pair)' (known: starttls=required, starttls=optional)")
            }
        }
    }

    /// The URL without its password, for logs and errors.
    public var description: String {
        let scheme = security == .implicitTLS ? "smtps" : "smtp"
        let userPart = user.map { "\($0)@" } ?? ""
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let option = security == .startTLSRequired ? "?starttls=required" : ""
        return "\(scheme)://\(userPart)\(hostPart):\(port)\(option)"
    }

    private static func port(_ text: Substring, _ bad: (String) -> HearthError) throws(HearthError) -> Int {
        guard let n = Int(text), (1...65535).contains(n) else { throw bad("the port '\(text)' is not 1-65535") }
        return n
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var i = text.utf8.startIndex
        let utf8 = text.utf8
        while i < utf8.endIndex {
            let b = utf8[i]
            if b == UInt8(ascii: "%") {
                let h = utf8.index(after: i)
                guard h < utf8.endIndex, utf8.index(after: h) < utf8.endIndex,
                      let hi = hexValue(utf8[h]), let lo = hexValue(utf8[utf8.index(after: h)]) else { return nil }
                bytes.append(hi << 4 | lo)
                i = utf8.index(h, offsetBy: 2)
            } else {
                bytes.append(b)
                i = utf8.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
