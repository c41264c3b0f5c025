import Crypto
import HearthCore

/// Encrypts the one-time tokens that wait in the outbox (ChaCha20-Poly1305), so the database file never
/// holds a usable token in clear: a copied file or a backup of it yields nothing that resets a password.
/// The server's key lives beside the database in `DATA/outbox.key` (mode 0600), so messages queued before
/// a restart are still delivered after it; a message sealed under another key (the key file deleted or the
/// database moved without it) cannot be opened, and the outbox drops it: the user asks for a new link.
public struct OutboxSeal: Sendable {
    /// The key file's name inside the data folder.
    public static let fileName = "outbox.key"
    private let key: SymmetricKey

    /// A seal with a fresh random key, known only to this process.
    public init() { key = SymmetricKey(data: Tokens.randomBytes(32)) }

    /// The seal of a data folder, its key read from (or generated into) `DATA/outbox.key`.
    public static func loadOrCreate(dataDirectory: String) throws(HearthError) -> OutboxSeal {
        let file = try SecretFile.loadOrCreate(dataDirectory: dataDirectory, name: fileName, what: "outbox key") {
            Base64.encode(Tokens.randomBytes(32))
        }
        guard let bytes = Base64.decode(file.secret), bytes.count == 32 else {
            throw .internal("The outbox key file \(file.path) is not 32 bytes in base64; delete it to make a new one (queued account messages are then dropped).")
        }
        return OutboxSeal(key: SymmetricKey(data: bytes))
    }

    private init(key: SymmetricKey) { self.key = key }

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
