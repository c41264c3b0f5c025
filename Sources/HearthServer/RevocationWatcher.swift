import HearthAuth
import HearthCore
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
/// the revocation and was missed by the first announcement. If the log was trimmed past the last row read
/// (it keeps 10,000), the watcher has every listener's session looked up again.
struct RevocationWatcher: Service {
    let storage: any RevocationLog
    let hub: RevocationHub
    let interval: Duration
    let logger: Logger
    /// The log rows read so far: those logged before the server started are history.
    private let start: Int64

    /// Rows read in one look; a longer backlog is read in further looks without waiting.
    static let batchSize = 500

    init(storage: any RevocationLog, hub: RevocationHub, interval: Duration, logger: Logger) throws(HearthError) {
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
                if let oldest = try storage.oldestRevocationSequence(), oldest > last + 1 {
                    // Rows this watcher had not read were trimmed (more than the log keeps came in between two
                    // looks): every listener's session is looked up again instead.
                    logger.warning("revocations were trimmed from the log before they were read; checking every listener's session",
                                   metadata: ["missed": "\(oldest - last - 1)"])
                    hub.publish(.sessionsUnknown)
                    last = oldest - 1
                }
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
