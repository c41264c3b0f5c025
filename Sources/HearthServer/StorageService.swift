import HearthEngine
import Logging
import ServiceLifecycle

/// Closes the storage (finishing queued writes) after the HTTP server has stopped.
struct StorageService: Service {
    let storage: any DocumentStorage
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        storage.close()
        logger.info("store closed")
    }
}
