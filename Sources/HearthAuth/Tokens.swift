#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import HearthCore

/// Opaque bearer tokens: a recognisable prefix and 32 random bytes from the system CSPRNG in unpadded
/// base64url. Only their SHA-256 hashes are ever stored, so a leaked database holds no usable token.
public enum Tokens {
    /// What a token is for; the prefix makes a leaked token recognisable (secret scanners, logs review).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Short-lived access token (`hat_`).
        case access = "hat_"
        /// Rotating refresh token (`hrt_`).
        case refresh = "hrt_"
        /// Single-use password-reset token (`hrs_`).
        case passwordReset = "hrs_"
        /// Single-use email-verification token (`hev_`).
        case emailVerification = "hev_"
        /// The server's admin key (`hak_`).
        case adminKey = "hak_"
        /// A stored object's download token (`hdl_`), which reads its bytes without an `Authorization` header.
        case download = "hdl_"

        /// The prefix, e.g. `hat_`.
        public var prefix: String { rawValue }
    }

    /// Random bytes per token: 256 bits.
    public static let randomByteCount = 32
    /// Length of the random part in base64url without padding.
    static let bodyLength = 43

    /// A fresh token of a kind.
    public static func generate(_ kind: Kind) -> String {
        kind.prefix + base64URL(randomBytes(randomByteCount))
    }

    /// True when `text` has the shape of a token of `kind` (prefix, length, alphabet). Checked before any
    /// lookup so malformed input is refused cheaply and the same way as an unknown token.
    public static func isWellFormed(_ text: String, _ kind: Kind) -> Bool {
        let bytes = text.utf8
        guard bytes.count == kind.prefix.utf8.count + bodyLength, text.hasPrefix(kind.prefix) else { return false }
        return bytes.dropFirst(kind.prefix.utf8.count).allSatisfy { c in
            (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 45 || c == 95
        }
    }

    /// The storage form of a token: its SHA-256 hash.
    public static func hash(_ token: String) -> TokenHash {
        TokenHash(bytes: Array(SHA256.hash(data: Array(token.utf8))))
    }

    /// Compares two secrets in constant time (by their hashes, so not even their lengths leak).
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        ConstantTime.equals(hash(a).bytes, hash(b).bytes)
    }

    /// `count` bytes from the system CSPRNG in one call of the C library's `arc4random_buf` (`getrandom` on
    /// Linux), not one call per 8 bytes.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress { arc4random_buf(base, count) }
            initialized = count
        }
    }

    /// Unpadded base64url (RFC 4648 §5).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        for c in Base64.encode(bytes).utf8 {
            switch c {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
