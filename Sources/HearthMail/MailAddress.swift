import HearthCore

/// One mailbox: an address and an optional display name (`"Hearth" <no-reply@example.com>`). The address
/// must be plain ASCII `local@domain` without spaces, brackets or line breaks, since it goes into the SMTP
/// envelope as is; the display name may be any text but a line break, and is encoded per RFC 2047.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// `local@domain`.
    public let address: String
    /// The name shown, if any.
    public let displayName: String?

    /// Checks an address; `field` names the setting or request field in the error.
    public init(_ address: String, displayName: String? = nil, field: String = "address") throws(HearthError) {
        guard !address.isEmpty, address.utf8.count <= 254 else {
            throw .invalidArgument("\(field): an address of 1 to 254 characters is required")
        }
        if MailHeader.hasLineBreak(address) {
            throw .invalidArgument("\(field): a line break in an address is refused (header injection)")
        }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64,
              parts[1].split(separator: ".", omittingEmptySubsequences: false).count >= 2,
              parts[1].split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ !$0.isEmpty })
        else { throw .invalidArgument("\(field): '\(address)' is not an address like name@example.com") }
        guard address.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && !"<>()[]\\,;:\"".unicodeScalars.contains($0) })
        else { throw .invalidArgument("\(field): '\(address)' may hold only printable ASCII without spaces or <>()[],;:\\\"") }
        if let name = displayName, MailHeader.hasLineBreak(name) {
            throw .invalidArgument("\(field): a line break in a display name is refused (header injection)")
        }
        self.address = address
        self.displayName = displayName?.isEmpty == true ? nil : displayName
    }

    /// Parses `Name <local@domain>` or a bare `local@domain`, as `--mail-from` takes it.
    public init(parsing text: String, field: String = "address") throws(HearthError) {
        if MailHeader.hasLineBreak(text) {
            throw .invalidArgument("\(field): a line break is refused (header injection)")
        }
        if let open = text.lastIndex(of: "<"), text.hasSuffix(">") {
            var name = text[..<open].trimmingSpaces
            if name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 { name = String(name.dropFirst().dropLast()) }
            let address = text[text.index(after: open)..<text.index(before: text.endIndex)]
            try self.init(String(address), displayName: name.isEmpty ? nil : name, field: field)
        } else {
            try self.init(text.trimmingSpaces, field: field)
        }
    }

    public var description: String { displayName.map { "\($0) <\(address)>" } ?? address }
}

extension StringProtocol {
    var trimmingSpaces: String {
        let scalars = String(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
              let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return String(scalars[first...last])
    }
}
