import HearthAuth
import HearthCore

/// Who may read `/metrics`: anyone who can reach the server, unless a metrics key is configured; then only a
/// request with `Authorization: Bearer <metrics key>` or the admin key (a scraper need not hold the admin key).
/// The key is kept as its hash and compared in constant time, as the admin key is.
struct MetricsAccess: Sendable {
    let adminKey: AdminKey
    let keyHash: TokenHash?

    /// Shortest metrics key accepted; a shorter one could be guessed.
    static let minimumKeyLength = 32

    init(adminKey: AdminKey, key: String?) throws(HearthError) {
        self.adminKey = adminKey
        guard let key, !key.isEmpty else {
            keyHash = nil
            return
        }
        guard key.utf8.count >= Self.minimumKeyLength, !key.unicodeScalars.contains(where: { $0.properties.isWhitespace }) else {
            throw .invalidArgument("the metrics key must be at least \(Self.minimumKeyLength) characters long, without whitespace")
        }
        keyHash = Tokens.hash(key)
    }

    /// Throws `unauthenticated` unless the `Authorization` header may read the metrics.
    func check(_ authorization: String?) throws(HearthError) {
        guard let keyHash else { return }
        guard let header = authorization, let token = AdminKey.bearerToken(header),
              Tokens.hash(token).matches(keyHash) || adminKey.matches(token) else {
            throw .unauthenticated("/metrics takes 'Authorization: Bearer <metrics key>' (or the admin key)")
        }
    }
}
