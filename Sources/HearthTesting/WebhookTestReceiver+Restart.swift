import Foundation
import HearthCore

extension WebhookTestReceiver {
    /// Runs `body` with a receiver verifying with `secret`, stopped afterwards whatever `body` does.
    public static func with<T>(secret: String, _ body: (WebhookTestReceiver) async throws -> T) async throws -> T {
        let receiver = try await start(secret: secret)
        return try await withCleanup({ try await body(receiver) }, cleanup: { await receiver.stop() })
    }

    /// Function events that a `hearth` process killed with SIGKILL had not delivered, as the process restarted
    /// on the same folder delivers them. `act` makes `count` events through a process started with
    /// `arguments` (its functions file pointing at this receiver), which this receiver refuses (503) until
    /// they have arrived and the process is killed; the restarted process has them answered 200 and is
    /// stopped (SIGTERM) once none is pending. Answers the requests refused before the kill and those
    /// delivered after the restart.
    public func deliveredAfterKill(events count: Int, arguments: [String], _ act: (ServerProcess) async throws -> Void)
        async throws -> (refused: [Received], delivered: [Received]) {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try answer([], then: .init(status: 503))
        let server = try await ServerProcess.start(dataDirectory: folder, arguments: arguments)
        try await act(server)
        let refused = try await waitForRequests(count)
        server.signal(SIGKILL)
        _ = try await server.waitForExit()
        try answer([], then: .init(status: 200))
        let before = received().count
        let restarted = try await ServerProcess.start(dataDirectory: folder, adminKey: server.adminKey, arguments: arguments)
        let delivered = try await waitForRequests(before + count).filter { $0.status == 200 }
        _ = try await restarted.client().functionEvents("pending") { $0.isEmpty }
        restarted.signal(SIGTERM)
        _ = try await restarted.waitForExit()
        return (refused, delivered)
    }
}
