import HearthCore
import HearthEngine
import Logging
import ServiceLifecycle

/// Removes expired resumable uploads, with their bytes, every `interval` (`Database.sweepUploads`; the store
/// sweeps once more when it opens). Stops on graceful shutdown.
struct UploadSweeper: Service {
    let database: Database
    let interval: Duration
    let logger: Logger

    func run() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            do {
                let removed = try await database.sweepUploads()
                if removed > 0 { logger.debug("swept expired uploads", metadata: ["uploads": "\(removed)"]) }
            } catch {
                logger.error("upload sweep failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
