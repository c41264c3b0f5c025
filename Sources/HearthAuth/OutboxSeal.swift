import Crypto
import HearthCore

/// Encrypts the one-time tokens that wait in a persistent outbox (ChaCha20-Poly1305 under a key that lives
/// only in the server's memory), so the database file never holds a usable token in clear: a copied file
/// or a backup yields nothing that resets a password. A message sealed by an earlier process cannot be
/// opened after a restart; the outbox drops it and the user asks for a new link.
public struct OutboxSeal: Sendable {
    private let key: SymmetricKey

    /// A seal with a fresh random key.
    public init() { key = SymmetricKey(data: Tokens.randomBytes(32)) }

    /// The sealed form of a token (nonce, ciphertext and tag in one blob).
    public func seal(_ token: String) -> [UInt8] {
        // Sealing with a well-formed key and a random nonce cannot fail; an empty blob would never open.
        guard let box = try? ChaChaPoly.seal(Array(token.utf8), using: key) else { return [] }
        return Array(box.combined)
    }

    /// The token in a sealed blob, or nil when it was sealed under another key or was tampered with.
    public func open(_ sealed: [UInt8]) -> String? {
        guard let box = try? ChaChaPoly.SealedBox(combined: sealed),
              let bytes = try? ChaChaPoly.open(box, using: key) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
