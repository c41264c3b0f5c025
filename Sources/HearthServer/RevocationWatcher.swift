import HearthAuth
import HearthCore
import HearthStore
import Logging
import ServiceLifecycle

/// Tells live listeners of revocations made by other processes on the same data folder (`hearth users
/// revoke` or `delete` beside a running server): every `interval` it reads the revocation log past the
/// last row it read and publishes the rows to the hub, which ends those sessions' listeners with
/// `unauthenticated`. HTTP requests need nothing of the sort: they look their session up in the database
/// every time.
///
/// The log is written by triggers in the same transaction as each revocation (see `Schema`), so no path
/// can revoke without a row, and a look is one primary-key range read of a small table: cheap enough to
/// poll twice a second, and proportional to what changed rather than to the sessions or listeners open.
/// This process's own revocations come back too, already published; publishing them again ends nothing
/// new (a revoked session never works again), except a listener whose connection authenticated just before
/// the revocation and was missed by the first announcement.
struct RevocationWatcher: Service {
    let storage: SQLiteAuthStorage
    let hub: RevocationHub
    let interval: Duration
    let logger: Logger
    /// The log rows read so far: those logged before the server started are history.
    private let start: Int64

    /// Rows read in one look; a longer backlog is read in further looks without waiting.
    static let batchSize = 500

    init(storage: SQLiteAuthStorage, hub: RevocationHub, interval: Duration, logger: Logger) throws(HearthError) {
        self.storage = storage
        self.hub = hub
        self.interval = interval
        self.logger = logger
        start = try storage.latestRevocationSequence()
    }

    func run() async {
        var last = start
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var full = false
            do {
                let rows = try storage.revocations(after: last, limit: Self.batchSize)
                for row in rows { hub.publish(row.event) }
                if let newest = rows.last?.sequence {
                    last = newest
                    logger.debug("revocations read from the log", metadata: ["events": "\(rows.count)", "through": "\(newest)"])
                }
                full = rows.count >= Self.batchSize
            } catch {
                logger.error("reading the revocation log failed", metadata: ["error": "\(error.message)"])
            }
            if !full { try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } }
        }
    }
}
