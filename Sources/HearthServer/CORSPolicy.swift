import Foundation
import HearthCore

/// Which web origins may call the server from a browser (`--cors-origin`), and the CORS headers that tell the
/// browser so. The one place those headers are decided: `ConnectionGuard` adds `answerFields` to every answer
/// of a connection (routed, answered on the event loop, or refused), and `PreflightMiddleware` answers
/// preflights with `preflightFields`.
///
/// An origin is allowed when it equals one given, when `*` is given, or when it is a subdomain of a
/// `scheme://*.domain[:port]` pattern. `null` (sandboxed frames, `file:` pages) is never allowed. No
/// `Access-Control-Allow-Credentials`: Hearth's callers present a bearer token, not cookies.
public struct CORSPolicy: Sendable, Equatable {
    /// One allowed origin, or a family of them.
    enum Pattern: Sendable, Equatable {
        /// `*`: any origin but `null`.
        case any
        /// `https://app.example.com`, compared in lower case.
        case exact(String)
        /// `https://*.example.com`: `https://` + one or more labels + `.example.com` (+ the same port).
        case subdomains(prefix: String, suffix: String)
    }

    let patterns: [Pattern]

    /// Methods a preflight allows: every method of the API.
    static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
    /// Request headers a preflight allows, besides any `X-Hearth-*` it asks for (custom metadata of files).
    static let allowedHeaders = [
        "Authorization", "Content-Type", "X-HTTP-Method-Override", "If-Match", "If-None-Match", "Range",
        "X-Hearth-SHA256", "Tus-Resumable", "Upload-Length", "Upload-Offset", "Upload-Metadata", "Upload-Checksum",
        "Upload-Defer-Length", "Upload-Concat",
    ]
    /// Response headers a page may read, besides any `X-Hearth-*` an answer carries.
    static let exposedHeaders = [
        "ETag", "Location", "Content-Range", "Content-Disposition", "Content-Length", "Accept-Ranges", "Retry-After",
        "Upload-Offset", "Upload-Length", "Upload-Expires", "Upload-Metadata", "Tus-Version", "Tus-Resumable",
        "Tus-Max-Size", "Tus-Extension",
    ]
    /// Seconds a browser may keep a preflight's answer (Chromium keeps one at most two hours).
    static let maxAgeSeconds = 7200
    /// The prefix of Hearth's own headers, allowed and exposed by name as they come.
    static let hearthPrefix = "x-hearth-"

    /// The policy for the origins given (`--cors-origin`, repeatable); each is checked, and a malformed one
    /// is named in the error. Nil for none: no CORS headers at all.
    public init?(origins: [String]) throws(HearthError) {
        var patterns: [Pattern] = []
        for text in origins {
            let origin = text.trimmingSpaces()
            if origin.isEmpty { continue }
            patterns.append(try Self.pattern(origin))
        }
        if patterns.isEmpty { return nil }
        self.patterns = patterns
    }

    /// Whether a request's `Origin` is one allowed.
    func allows(_ origin: String) -> Bool {
        let origin = origin.lowercased()
        if origin == "null" { return false }
        for pattern in patterns {
            switch pattern {
            case .any: return true
            case .exact(let allowed): if origin == allowed { return true }
            case .subdomains(let prefix, let suffix):
                guard origin.utf8.count > prefix.utf8.count + suffix.utf8.count, origin.hasPrefix(prefix), origin.hasSuffix(suffix)
                else { continue }
                let labels = origin.utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
                // One or more labels of a host name: no port, path or empty label slipped in.
                if labels.allSatisfy(Self.isHostByte), labels.first != UInt8(ascii: "."), labels.last != UInt8(ascii: ".") {
                    return true
                }
            }
        }
        return false
    }

    /// The CORS headers of an answer to a request whose `Origin` was `origin` (nil: none sent): always
    /// `Vary: Origin`, since the answer depends on it; for an allowed origin, the origin echoed and the
    /// headers a page may read (`responseNames`: the answer's own header names, for its `X-Hearth-*` ones).
    func answerFields(origin: String?, responseNames: some Sequence<String>) -> [(name: String, value: String)] {
        guard let origin, allows(origin) else { return [("Vary", "Origin")] }
        var exposed = Self.exposedHeaders
        for name in responseNames where name.lowercased().hasPrefix(Self.hearthPrefix) { exposed.append(name) }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                ("Access-Control-Expose-Headers", exposed.joined(separator: ", "))]
    }

    /// The headers of a preflight's answer, besides those of `answerFields`: the methods, the request headers
    /// (`requested`, its `Access-Control-Request-Headers`, for the `X-Hearth-*` it names) and how long to keep them.
    func preflightFields(requested: String?) -> [(name: String, value: String)] {
        var headers = Self.allowedHeaders
        for name in (requested ?? "").split(separator: ",") {
            let name = String(name).trimmingSpaces()
            if name.lowercased().hasPrefix(Self.hearthPrefix), name.utf8.allSatisfy(Self.isTokenByte) { headers.append(name) }
        }
        return [("Access-Control-Allow-Methods", Self.allowedMethods),
                ("Access-Control-Allow-Headers", headers.joined(separator: ", ")),
                ("Access-Control-Max-Age", String(Self.maxAgeSeconds))]
    }

    /// An allowed origin as given: `*`, `scheme://host[:port]`, or `scheme://*.domain[:port]`.
    static func pattern(_ text: String) throws(HearthError) -> Pattern {
        if text == "*" { return .any }
        let origin = text.lowercased()
        func refuse(_ why: String) -> HearthError {
            .invalidArgument("corsOrigin '\(text)': \(why); an origin is scheme://host[:port] (https://app.example.com), "
                             + "scheme://*.domain[:port] for its subdomains, or *")
        }
        guard let separator = origin.range(of: "://") else { throw refuse("no scheme") }
        let scheme = origin[..<separator.lowerBound]
        guard let first = scheme.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
              scheme.utf8.allSatisfy({ isHostByte($0) || $0 == UInt8(ascii: "+") }) else { throw refuse("the scheme is not valid") }
        var authority = origin[separator.upperBound...]
        if authority.contains("/") || authority.contains("?") || authority.contains("#") {
            throw refuse("an origin has no path, not even a trailing /")
        }
        if authority.contains("@") { throw refuse("an origin has no user name") }
        var port = ""
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            let digits = authority[authority.index(after: colon)...]
            guard let number = Int(digits), (1...65535).contains(number), digits.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw refuse("the port is not a number from 1 to 65535")
            }
            port = ":" + digits
            authority = authority[..<colon]
        }
        if authority.hasPrefix("*.") {
            let domain = authority.dropFirst(2)
            guard !domain.isEmpty, domain.utf8.allSatisfy(isHostByte), !domain.hasPrefix("."), !domain.hasSuffix("."),
                  !domain.contains("..") else { throw refuse("the domain after *. is not a host name") }
            return .subdomains(prefix: scheme + "://", suffix: "." + domain + port)
        }
        let bracketed = authority.hasPrefix("[") && authority.hasSuffix("]")
        guard !authority.isEmpty, bracketed || authority.utf8.allSatisfy(isHostByte), !authority.contains("..") else {
            throw refuse(authority.contains("*") ? "* stands only for a whole origin or as *. before a domain" : "the host is not valid")
        }
        return .exact(origin)
    }

    /// A byte of a host name or scheme: letter, digit, `-` or `.` (lower case; origins are compared so).
    static func isHostByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// A byte of a header name (RFC 9110's token), so that a requested name echoed cannot break the header.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
    }
}

private extension String {
    func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
