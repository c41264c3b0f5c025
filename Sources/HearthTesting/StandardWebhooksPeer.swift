import Foundation
import HearthCore

/// The `standardwebhooks` library (PyPI, the specification's reference implementation) as a signer, through
/// `Tests/peers/webhook_sign.py`: what it signs, a Standard Webhooks verifier must accept.
public enum StandardWebhooksPeer {
    /// One message to sign.
    public struct Message: Sendable {
        public var id: String
        public var timestamp: Int64
        public var body: String

        public init(id: String, timestamp: Int64, body: String) {
            self.id = id
            self.timestamp = timestamp
            self.body = body
        }
    }

    /// The `webhook-signature` values the library makes for `messages` with `secret`, in order (one process
    /// for them all).
    public static func sign(secret: String, _ messages: [Message]) async throws -> [String] {
        let python = try PeerPython.find(module: "standardwebhooks",
                                         purpose: "the functions kit's tests need standardwebhooks (the Standard Webhooks library, from PyPI)")
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/messages.json"
        let list = JSON.array(messages.map { .object([("id", .string($0.id)), ("timestamp", .int($0.timestamp)), ("body", .string($0.body))]) })
        try Data(list.serialized()).write(to: URL(fileURLWithPath: file))
        let result = try await CommandResult.run(program: python, [Harness.projectFile("Tests/peers/webhook_sign.py"),
                                                                   "--secret", secret, "--messages", file])
        guard result.status == 0, case .array(let items) = try JSON.parse(result.output), items.count == messages.count else {
            throw ServerProcessError(message: "webhook_sign.py failed (\(result.status)): \(result.output) \(result.errorOutput)")
        }
        return items.map { $0.stringValue ?? "" }
    }
}
