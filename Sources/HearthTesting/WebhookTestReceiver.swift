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
    let folder: String
    let process: ChildProcess
    let reader: OutputReader

    /// The URL to name in a functions file.
    public var url: String { "http://127.0.0.1:\(port)/hooks" }

    /// Starts a receiver on `port` (nil: a free one) and waits until it listens.
    public static func start(secret: String, port: Int? = nil, timeout: Double = 60) async throws -> WebhookTestReceiver {
        try await RawHTTPConnection.onOwnThread { try WebhookTestReceiver(secret: secret, port: port, timeout: timeout) }
    }

    private init(secret: String, port: Int?, timeout: Double) throws {
        let python = try PeerPython.find(module: "standardwebhooks",
                                         purpose: "the functions end-to-end tests need standardwebhooks (the Standard Webhooks library, from PyPI)")
        folder = TestServer.temporaryDirectory()
        self.port = try port ?? LoopbackPort.unused()
        self.secret = secret
        let output = try ChildProcess.pipe()
        let arguments = [Harness.projectFile("Tests/peers/webhook_receiver.py"), "--port", "\(self.port)", "--secret", secret,
                         "--out", folder + "/received.ndjson", "--answers", folder + "/answers.json"]
        let process = try ChildProcess.start(childEnds: [output.write], parentEnds: [output.read]) {
            try ChildProcess(path: python, arguments: ["-u"] + arguments, stdout: output.write, stderr: output.write)
        }
        reader = OutputReader(FileHandle(fileDescriptor: output.read, closeOnDealloc: true))
        self.process = process
        guard reader.waitFor("ready \(self.port)", timeout: timeout) else {
            process.signal(SIGTERM)
            throw ServerProcessError(message: "the webhook receiver did not start within \(timeout) s: \(reader.text)")
        }
    }

    /// Answers `queue` to the next requests, in order, then `then` to every later one.
    public func answer(_ queue: [Answer], then: Answer = Answer()) throws {
        let text = "{\"queue\": [\(queue.map(\.json).joined(separator: ", "))], \"default\": \(then.json)}"
        let temporary = folder + "/answers.json.new"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        _ = rename(temporary, folder + "/answers.json")
    }

    /// Stops the receiver and removes its folder.
    public func stop() async {
        await process.terminate()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The requests so far, oldest first.
    public func received() -> [Received] {
        guard let data = FileManager.default.contents(atPath: folder + "/received.ndjson") else { return [] }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let json = try? JSON.parse(line), case .object(let pairs)? = json["headers"],
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
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let all = received()
            if all.count >= count { return all }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ServerProcessError(message: "the webhook receiver had \(received().count) of \(count) requests within \(timeout) s; its log: \(reader.text)")
    }
}
