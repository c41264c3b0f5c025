import HearthCore

/// The server owner's key: `Authorization: Bearer <key>` acts as the admin (bypassing rules, like
/// Firebase's Admin SDK). Taken from configuration, or generated on first start into the data folder as
/// `admin.key` with mode 0600. Only its hash is kept in memory; checks compare hashes in constant time.
public struct AdminKey: Sendable {
    /// Where the key came from.
    public enum Source: Sendable, Equatable {
        /// From configuration (`HEARTH_ADMIN_KEY` or a flag).
        case configured
        /// Read from this existing file.
        case loaded(path: String)
        /// Generated into this new file.
        case created(path: String)
    }

    /// The key file's name inside the data folder.
    public static let fileName = "admin.key"
    /// Shortest key accepted from configuration or a file, in bytes; shorter keys are guessable.
    public static let minimumLength = 32

    /// Where the key came from.
    public let source: Source
    private let hash: TokenHash

    /// Wraps a key given directly; refuses keys shorter than `minimumLength` or containing whitespace.
    public init(key: String, source: Source = .configured) throws(HearthError) {
        guard key.utf8.count >= AdminKey.minimumLength else {
            throw .invalidArgument("the admin key must be at least \(AdminKey.minimumLength) characters long")
        }
        guard !key.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else {
            throw .invalidArgument("the admin key may not contain whitespace or control characters")
        }
        self.hash = Tokens.hash(key)
        self.source = source
    }

    /// The configured key if there is one; otherwise the key in `<dataDirectory>/admin.key`, generating it
    /// (a `hak_` token, mode 0600, the folder made with 0700 if missing) on first start. A key file that
    /// others can read is tightened to 0600.
    public static func loadOrCreate(dataDirectory: String, configured: String?) throws(HearthError) -> AdminKey {
        if let configured, !configured.isEmpty { return try AdminKey(key: configured, source: .configured) }
        let file = try SecretFile.loadOrCreate(dataDirectory: dataDirectory, name: fileName, what: "admin key") {
            Tokens.generate(.adminKey)
        }
        return try AdminKey(key: file.secret, source: file.created ? .created(path: file.path) : .loaded(path: file.path))
    }

    /// True when `presented` is the key (constant time).
    public func matches(_ presented: String) -> Bool {
        Tokens.hash(presented).matches(hash)
    }

    /// True when an `Authorization` header value is `Bearer <the key>` (scheme case-insensitive).
    public func matches(authorization header: String) -> Bool {
        guard let token = AdminKey.bearerToken(header) else { return false }
        return matches(token)
    }

    /// The credential of a `Bearer` authorization header, or nil for another scheme.
    public static func bearerToken(_ header: String) -> String? {
        // The common form, `Bearer <token>` with nothing to trim, without building new strings.
        let bytes = header.utf8
        if bytes.count > 7, bytes.starts(with: "Bearer ".utf8), let first = bytes.dropFirst(7).first, let last = bytes.last,
           (0x21...0x7E).contains(first), (0x21...0x7E).contains(last) {
            return String(header.utf8.dropFirst(7))
        }
        let trimmed = EmailAddress.trim(header)
        guard trimmed.utf8.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        let token = EmailAddress.trim(String(trimmed.dropFirst(7)))
        return token.isEmpty ? nil : token
    }
}
