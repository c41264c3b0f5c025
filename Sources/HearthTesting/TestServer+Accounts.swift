import Foundation
import HearthAuth
import HearthCore
import HearthServer

extension ServerConfiguration {
    /// Cheap Argon2id parameters so account tests stay fast (one test keeps the defaults), a quick outbox,
    /// and optionally a clock the test moves.
    public mutating func useTestAccounts(clock: ManualClock? = nil) {
        passwordHashing = PasswordHasher.Configuration(memoryKiB: 64, iterations: 1, parallelism: 1)
        outboxInterval = .milliseconds(20)
        if let clock { authClock = clock.function }
    }
}

extension TestServer {
    /// The messages delivered to the development mailbox (`outbox.ndjson`) so far, oldest first.
    public func outboxMessages() -> [JSON] {
        guard let data = FileManager.default.contents(atPath: OutboxFile(dataDirectory: dataDirectory).path) else {
            return []
        }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? JSON.parse($0) }
    }

    /// Waits (up to `timeout` seconds) for a message of a purpose to an address and answers its token.
    public func waitForOutboxToken(to address: String, purpose: String, after count: Int = 0,
                                   timeout: Double = 10) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let matching = outboxMessages().filter {
                $0["to"]?.stringValue == address && $0["purpose"]?.stringValue == purpose
            }
            if matching.count > count, let token = matching.last?["token"]?.stringValue { return token }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ServerProcessError(message: "no \(purpose) message to \(address) reached the outbox within \(timeout) s")
    }
}
