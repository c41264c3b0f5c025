import HearthCore

/// An email address as given (trimmed) and in its normalized form (lowercased), which is what makes
/// addresses unique: `Alice@Example.com` and `alice@example.com` are one account.
public struct EmailAddress: Sendable, Hashable {
    /// The address as the user wrote it, without surrounding whitespace; shown back and mailed to.
    public let original: String
    /// The lowercased address; the uniqueness and lookup key.
    public let normalized: String

    /// Normalizes and checks an address; `field` names the request field for the error message.
    /// The syntax check is deliberately basic (one `@`, a non-empty local part, a dotted domain, no spaces
    /// or control characters): delivery is the real test.
    public init(_ raw: String, field: String = "email") throws(HearthError) {
        let trimmed = EmailAddress.trim(raw)
        guard !trimmed.isEmpty else { throw .invalidArgument("\(field) is required") }
        guard trimmed.utf8.count <= AuthLimits.maxEmailBytes else {
            throw .invalidArgument("\(field) is longer than \(AuthLimits.maxEmailBytes) bytes")
        }
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw .invalidArgument("\(field) must contain exactly one '@', as in name@example.com")
        }
        let local = parts[0], domain = parts[1]
        guard !local.isEmpty, local.utf8.count <= AuthLimits.maxEmailLocalBytes else {
            throw .invalidArgument("\(field) needs a name of 1 to \(AuthLimits.maxEmailLocalBytes) bytes before '@'")
        }
        guard trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) })
        else { throw .invalidArgument("\(field) may not contain spaces or control characters") }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }),
              domain.unicodeScalars.allSatisfy({ $0.value >= 0x80 || $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "." })
        else { throw .invalidArgument("\(field) has an invalid domain after '@'; expected something like example.com") }
        self.original = trimmed
        self.normalized = trimmed.lowercased()
    }

    /// The normalized form of an address without the syntax check, for looking up what may be stored.
    public static func normalize(_ raw: String) -> String { trim(raw).lowercased() }

    static func trim(_ s: String) -> String {
        let scalars = s.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
