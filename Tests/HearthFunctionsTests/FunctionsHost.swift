import Foundation
import HearthCore
import HearthFunctions
import HearthTesting
import Logging
import ServiceLifecycle

/// A `FunctionsServer` on a loopback port chosen before Hearth starts, so a functions file can name it and the
/// handlers, made once Hearth's port is known, can call back with their event's token. Events sent before the
/// handlers serve are retried by Hearth (the tests shorten its retry delays).
struct FunctionsHost {
    let port: Int
    let secret: String

    init() throws {
        port = try LoopbackPort.unused()
        secret = FunctionsEndToEndTests.secret()
    }

    var url: String { "http://127.0.0.1:\(port)/hooks" }

    /// An app's functions file as shipped, its endpoints pointed here with this host's secret, written to a
    /// temporary folder; answers its path.
    func functionsFile(from shipped: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: shipped))
        guard var file = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let endpoints = file["endpoints"] as? [String: [String: Any]] else {
            throw ExpectationFailure("\(shipped) has no endpoints")
        }
        file["endpoints"] = endpoints.mapValues { endpoint in
            endpoint.merging(["url": url, "secret": secret]) { _, new in new }
        }
        let path = TestFolders.make() + "/functions.json"
        try JSONSerialization.data(withJSONObject: file).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Serves `functions` while `body` runs.
    func serve<T>(_ functions: Functions, _ body: () async throws -> T) async throws -> T {
        var logger = Logger(label: "functions-test")
        logger.logLevel = .warning
        let server = try FunctionsServer(secret: secret, path: "/hooks", functions: functions)
        let group = ServiceGroup(configuration: .init(services: [server.application(port: port, logger: logger)], logger: logger))
        let running = Task { try await group.run() }
        return try await withCleanup({ try await body() }) {
            await group.triggerGracefulShutdown()
            _ = await running.result
        }
    }
}
