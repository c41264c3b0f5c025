import Foundation
import HearthCore

/// The admin key: a bearer secret that acts as the server's owner and bypasses rules (like Firebase's Admin SDK).
public struct AdminKey: Sendable {
    /// The key's text.
    public let value: String

    /// Makes a key from configured text.
    public init(_ value: String) { self.value = value }

    /// The configured key when given, else the key stored in the data folder, else a new random key written
    /// there with mode 0600.
    public static func loadOrCreate(dataDirectory: String, configured: String?) throws -> AdminKey {
        if let configured, !configured.isEmpty { return AdminKey(configured) }
        let path = (dataDirectory as NSString).appendingPathComponent("admin.key")
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { return AdminKey(trimmed) }
        }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        var bytes = [UInt8](repeating: 0, count: 32)
        var rng = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = rng.next() }
        let key = "hak_" + Base64.encode(bytes)
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let created = FileManager.default.createFile(
            atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600])
        guard created else { throw HearthError.internal("cannot write the admin key file") }
        return AdminKey(key)
    }

    /// Compares a presented secret with the key in time independent of where they differ.
    public func matches(_ presented: some StringProtocol) -> Bool {
        let a = Array(value.utf8), b = Array(presented.utf8)
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }
}
