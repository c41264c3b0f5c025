/// The SHA-256 hash of a token: what storage keeps and looks tokens up by.
public struct TokenHash: Sendable, Hashable, CustomStringConvertible {
    /// The 32 hash bytes (a `BLOB` in SQL).
    public let bytes: [UInt8]

    /// Wraps hash bytes (as read back from storage).
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Lowercase hex, for storage that prefers text keys.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses lowercase or uppercase hex; nil if malformed.
    public init?(hex: String) {
        let chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        self.bytes = out
    }

    /// Whether two hashes are equal, compared in constant time.
    public func matches(_ other: TokenHash) -> Bool {
        ConstantTime.equals(bytes, other.bytes)
    }

    /// Abbreviated, so a hash printed by mistake is still no lookup key.
    public var description: String { "TokenHash(\(hex.prefix(8))…)" }
}
