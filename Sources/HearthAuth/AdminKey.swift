#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
    /// Largest key file read, in bytes.
    static let maxFileBytes = 4_096

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
        try makeDirectory(dataDirectory)
        let path = dataDirectory.hasSuffix("/") ? dataDirectory + fileName : dataDirectory + "/" + fileName
        let key = Tokens.generate(.adminKey)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            let bytes = Array((key + "\n").utf8)
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd)
            close(fd)
            guard written == bytes.count, synced == 0 else {
                unlink(path)
                throw .internal("Could not write the admin key file \(path) (errno \(errno)).")
            }
            return try AdminKey(key: key, source: .created(path: path))
        }
        guard errno == EEXIST else { throw .internal("Could not create the admin key file \(path) (errno \(errno)).") }
        return try AdminKey(key: readKeyFile(path), source: .loaded(path: path))
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

    private static func makeDirectory(_ path: String) throws(HearthError) {
        var components: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            components.append(String(part))
            let prefix = components.joined(separator: "/")
            if prefix.isEmpty { continue }
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .internal("Could not create the data folder \(path) (errno \(errno)).")
            }
        }
    }

    private static func readKeyFile(_ path: String) throws(HearthError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .internal("Could not read the admin key file \(path) (errno \(errno)).") }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0 {
            // Readable by others: tighten rather than refuse, since the owner may have copied it carelessly.
            _ = fchmod(fd, 0o600)
        }
        var buffer = [UInt8](repeating: 0, count: maxFileBytes)
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 { throw .internal("Could not read the admin key file \(path) (errno \(errno)).") }
            if n == 0 { break }
            total += n
        }
        let text = EmailAddress.trim(String(decoding: buffer[..<total], as: UTF8.self))
        guard !text.isEmpty else { throw .internal("The admin key file \(path) is empty; delete it to make a new key.") }
        return text
    }
}
