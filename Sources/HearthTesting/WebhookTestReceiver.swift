import Foundation
import HearthCore

/// A Standard Webhooks receiver for end-to-end tests: `Tests/peers/webhook_receiver.py` on a loopback port,
/// verifying each request's signature with the `standardwebhooks` library and recording what arrived.
/// What it answers is set with `answer(_:then:)` at any time.
public final class WebhookTestReceiver: @unchecked Sendable {
    /// One request as it arrived.
    public struct Received: Sendable {
        /// Its headers, names in lower case.
        public var headers: [String: String]
        /// The body, as text.
        public var body: String
        /// Whether the library verified the signature.
        public var verified: Bool
        /// Why it did not.
        public var error: String?
        /// The status the receiver answered.
        public var status: Int

        /// The `webhook-id` header.
        public var id: String { headers["webhook-id"] ?? "" }
        /// The body parsed.
        public var json: JSON { (try? JSON.parse(body)) ?? .null }
    }

    /// One answer: a status, a JSON body, and a delay before it.
    public struct Answer: Sendable {
        public var status: Int
        public var body: String?
        public var delay: Double

        /// Makes an answer.
        public init(status: Int = 200, body: String? = nil, delay: Double = 0) {
            self.status = status
            self.body = body
            self.delay = delay
        }

        var json: String {
            var parts = ["\"status\": \(status)"]
            if let body { parts.append("\"body\": \(body)") }
            if delay > 0 { parts.append("\"delay\": \(delay)") }
            return "{" + parts.joined(separator: ", ") + "}"
        }
    }

    /// The port it listens on.
    public let port: Int
    /// The secret it verifies with (`whsec_...`).
    public let secret: String
    let peer: PeerProcess

    /// The URL to name in a functions file.
    public var url: String { "http://127.0.0.1:\(port)/hooks" }

    /// Starts a receiver on `port` (nil: a free one) and waits until it listens.
    public static func start(secret: String, port: Int? = nil, timeout: Double = 60) async throws -> WebhookTestReceiver {
        try await RawHTTPConnection.onOwnThread { try WebhookTestReceiver(secret: secret, port: port, timeout: timeout) }
    }

    private init(secret: String, port: Int?, timeout: Double) throws {
        let python = try PeerPython.find(module: "standardwebhooks",
                                         purpose: "the functions end-to-end tests need standardwebhooks (the Standard Webhooks library, from PyPI)")
        let folder = TestFolders.make()
        self.port = try port ?? LoopbackPort.unused()
        self.secret = secret
        let arguments = ["--port", "\(self.port)", "--secret", secret,
                         "--out", folder + "/received.ndjson", "--answers", folder + "/answers.json"]
        peer = try PeerProcess("webhook receiver", python: python, script: "Tests/peers/webhook_receiver.py", arguments: arguments,
                               folder: folder, port: self.port, timeout: timeout)
    }

    /// Answers `queue` to the next requests, in order, then `then` to every later one.
    public func answer(_ queue: [Answer], then: Answer = Answer()) throws {
        let text = "{\"queue\": [\(queue.map(\.json).joined(separator: ", "))], \"default\": \(then.json)}"
        let temporary = peer.folder + "/answers.json.new"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        _ = rename(temporary, peer.folder + "/answers.json")
    }

    /// Stops the receiver and removes its folder.
    public func stop() async { await peer.stop() }

    /// The requests so far, oldest first.
    public func received() -> [Received] {
        peer.received { json in
            guard case .object(let pairs)? = json["headers"],
                  let body = json["body"]?.stringValue else { return nil }
            var headers: [String: String] = [:]
            for (key, value) in pairs { headers[key] = value.stringValue ?? "" }
            var verified = false
            if case .bool(let b)? = json["verified"] { verified = b }
            var status = 0
            if case .int(let n)? = json["status"] { status = Int(n) }
            return Received(headers: headers, body: body, verified: verified, error: json["error"]?.stringValue, status: status)
        }
    }

    /// Waits (generously) until at least `count` requests arrived; answers them all.
    public func waitForRequests(_ count: Int, timeout: Double = 60) async throws -> [Received] {
        try await peer.wait(for: count, "requests", timeout: timeout, received)
    }
}
