import HearthCore

/// An Argon2id hash in the PHC string format, `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, as written by
/// the reference `argon2` tool (unpadded standard base64 for salt and hash).
public struct PHCString: Sendable, Hashable {
    /// Argon2 version 1.3, the only one Hearth writes or accepts.
    public static let version: UInt32 = 0x13

    /// Memory cost in KiB.
    public var memoryKiB: UInt32
    /// Number of passes.
    public var iterations: UInt32
    /// Lanes.
    public var parallelism: UInt32
    /// The salt.
    public var salt: [UInt8]
    /// The derived hash.
    public var hash: [UInt8]

    /// Makes a PHC value from its parts.
    public init(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32, salt: [UInt8], hash: [UInt8]) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
        self.salt = salt
        self.hash = hash
    }

    /// Parses a PHC string; nil unless it is Argon2id version 19 with parameters within `AuthLimits`.
    /// Bounding the parameters matters: a stored hash naming a huge memory cost must not make the
    /// server allocate it.
    public init?(_ text: String) {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].isEmpty, parts[1] == "argon2id", parts[2] == "v=19" else { return nil }
        var m: UInt32?, t: UInt32?, p: UInt32?
        let params = parts[3].split(separator: ",", omittingEmptySubsequences: false)
        guard params.count == 3 else { return nil }
        for (param, key) in zip(params, ["m", "t", "p"]) {
            guard param.hasPrefix(key + "="), let v = PHCString.decimal(param.dropFirst(2)) else { return nil }
            switch key {
            case "m": m = v
            case "t": t = v
            default: p = v
            }
        }
        guard let m, let t, let p,
              (1...AuthLimits.maxArgon2Parallelism).contains(p),
              (1...AuthLimits.maxArgon2Iterations).contains(t),
              m >= 8 * p, m <= AuthLimits.maxArgon2MemoryKiB,
              let salt = PHCString.decodeBase64(parts[4]), salt.count >= 8, salt.count <= 64,
              let hash = PHCString.decodeBase64(parts[5]), hash.count >= 16, hash.count <= 64
        else { return nil }
        self.init(memoryKiB: m, iterations: t, parallelism: p, salt: salt, hash: hash)
    }

    /// The PHC string.
    public var text: String {
        "$argon2id$v=19$m=\(memoryKiB),t=\(iterations),p=\(parallelism)$"
            + PHCString.encodeBase64(salt) + "$" + PHCString.encodeBase64(hash)
    }

    // Decimal without sign, leading zeros or overflow, as the PHC format requires.
    static func decimal(_ s: Substring) -> UInt32? {
        guard !s.isEmpty, s.count <= 10, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        guard s == "0" || s.first != "0" else { return nil }
        return UInt32(s)
    }

    static func encodeBase64(_ bytes: [UInt8]) -> String {
        var text = Base64.encode(bytes)
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    static func decodeBase64(_ s: Substring) -> [UInt8]? {
        guard !s.contains("=") else { return nil }
        let padding = (4 - s.utf8.count % 4) % 4
        guard padding != 3 else { return nil }
        return Base64.decode(String(s) + String(repeating: "=", count: padding))
    }
}
