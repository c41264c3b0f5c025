import HearthAuth
import HearthCore
import Logging
import ServiceLifecycle

/// Deletes ended sessions and expired one-time tokens every `interval` (`AuthService.sweep`), so the
/// session table does not grow with every sign-in ever made. Stops on graceful shutdown.
struct SessionSweeper: Service {
    let auth: AuthService
    let interval: Duration
    let logger: Logger

    func run() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let report = try await auth.sweep()
                if report.sessions > 0 || report.oneTimeTokens > 0 {
                    logger.debug("swept ended sessions", metadata: [
                        "sessions": "\(report.sessions)", "oneTimeTokens": "\(report.oneTimeTokens)",
                    ])
                }
            } catch {
                logger.error("session sweep failed", metadata: ["error": "\(error.message)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
