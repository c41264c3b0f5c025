import CSQLite
import Foundation
import HearthCore
import HearthSQLite
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Makes committed batches durable off the writer thread, then acknowledges them.
///
/// The writer commits with SQLite's `synchronous=NORMAL` (the WAL is written, not synced) and hands each
/// batch here. This thread syncs the WAL with one `fdatasync` that covers every batch committed so far,
/// then resumes those batches' requests and publishes their changes, in commit order. So a request is
/// acknowledged only once its commit is on disk — the guarantee of `synchronous=FULL` — while the writer
/// goes on committing the next batches during the sync instead of waiting for it. The same thread runs WAL
/// checkpoints on a connection of its own, so the writer never stalls on one.
///
/// At `normal` durability nothing waits for a sync, but this thread still syncs the WAL in the background
/// at most `backgroundSyncInterval` after a commit, so a power loss can cost at most that window of
/// acknowledged writes (SQLite's own `NORMAL` syncs only at checkpoints).
///
/// It is also where changes reach the commit observers (the listeners' feed), strictly in the change log's
/// order, each once. The store's writer is the only one that writes the database while the store is open:
/// tools act through a running server (`hearth users`, `hearth fixtures`), and a server or a tool that opens the
/// file holds the data folder's lock, so there are no other processes' changes to look for.
final class Syncer: @unchecked Sendable {
    struct Batch {
        let completions: [() -> Void]
        let changes: [ChangeRecord]
    }

    private let condition = NSCondition()
    private var pending: [Batch] = []
    private var stopping = false
    private var stopped = false
    private var walPages: Int32 = 0
    /// Commits since the last sync, at `normal` durability.
    private var dirty = false
    /// Longest a commit stays unsynced at `normal` durability.
    static let backgroundSyncInterval: TimeInterval = 0.05
    private var walFD: Int32 = -1
    private let walPath: String
    private let directory: String
    private let syncWAL: Bool
    /// True when acknowledgements wait for a WAL sync (`full` durability).
    var syncsWAL: Bool { syncWAL }
    private let observers: CommitObservers
    private let checkpointConnection: SQLiteConnection
    private let logger: Logger
    /// When checkpoints run (see `Store.Configuration.WALLimits`).
    private let limits: Store.Configuration.WALLimits
    /// Held by whoever checkpoints, so the writer's restart waits for a running checkpoint instead of
    /// failing with SQLITE_BUSY.
    private let checkpointLock = NSLock()
    /// The WAL's size after the last commit, in pages.
    private var lastWALPages: Int32 = 0

    init(databasePath: String, directory: String, syncWAL: Bool, limits: Store.Configuration.WALLimits,
         observers: CommitObservers, checkpointConnection: SQLiteConnection, logger: Logger) {
        self.limits = limits
        walPath = databasePath + "-wal"
        self.directory = directory
        self.syncWAL = syncWAL
        self.observers = observers
        self.checkpointConnection = checkpointConnection
        self.logger = logger
        let thread = Thread { [self] in
            Thread.current.name = "hearth-syncer"  // from inside, as in `WorkerThreads`
            loop()
        }
        thread.start()
    }

    /// Hands over a committed batch; its completions run once the batch is durable.
    func enqueue(_ batch: Batch) {
        condition.lock()
        pending.append(batch)
        condition.signal()
        condition.unlock()
    }

    /// Publishes changes that need no sync first (`normal` durability), in commit order. Called by the writer
    /// right after its commit.
    func publish(_ changes: [ChangeRecord]) {
        observers.committed(changes)
    }

    /// Told by SQLite's WAL hook how large the WAL is after each commit.
    func walSize(_ pages: Int32) {
        condition.lock()
        walPages = pages
        lastWALPages = pages
        if pages >= limits.checkpointPages || (!syncWAL && !dirty) { condition.signal() }
        if !syncWAL { dirty = true }
        condition.unlock()
    }

    /// Called by the writer between batches: when the WAL has outgrown `WALLimits.restartPages`, checkpoints it
    /// on the writer's connection in RESTART mode, holding commits back until the WAL can start over.
    func restartIfOversized(_ connection: SQLiteConnection) {
        condition.lock()
        let pages = lastWALPages
        condition.unlock()
        guard pages >= limits.restartPages else { return }
        checkpoint(connection, mode: "RESTART")
        condition.lock()
        lastWALPages = 0
        condition.unlock()
    }

    /// Runs a checkpoint on a connection, after any checkpoint already running.
    func checkpoint(_ connection: SQLiteConnection, mode: String) {
        checkpointLock.lock()
        defer { checkpointLock.unlock() }
        do {
            try connection.execute("PRAGMA wal_checkpoint(\(mode))")
        } catch {
            logger.warning("WAL checkpoint failed", metadata: ["mode": "\(mode)", "error": "\(error)"])
        }
    }

    /// Finishes pending batches and stops the thread.
    func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
        if walFD >= 0 { close(walFD) }
    }

    private func loop() {
        while true {
            condition.lock()
            while pending.isEmpty && !stopping && walPages < limits.checkpointPages && !dirty { condition.wait() }
            var backgroundSync = false
            if dirty && pending.isEmpty && !stopping && walPages < limits.checkpointPages {
                // Let commits gather for one interval, then sync them all at once.
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.backgroundSyncInterval))
            }
            if dirty {
                dirty = false
                backgroundSync = true
            }
            let batches = pending
            pending.removeAll(keepingCapacity: true)
            let wantsCheckpoint = walPages >= limits.checkpointPages
            if wantsCheckpoint { walPages = 0 }
            let finished = stopping && batches.isEmpty
            condition.unlock()

            if !batches.isEmpty {
                if syncWAL { sync() }
                // Observers first, as at `normal` durability: an acknowledged commit is already handed over.
                for batch in batches where !batch.changes.isEmpty { observers.committed(batch.changes) }
                for batch in batches {
                    for completion in batch.completions { completion() }
                }
            }
            if backgroundSync { sync() }
            if wantsCheckpoint { checkpoint(checkpointConnection, mode: "PASSIVE") }
            if finished {
                condition.lock()
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    /// Syncs the WAL file (the first time also the folder that holds it, so the file itself survives).
    private func sync() {
        if walFD < 0 {
            walFD = open(walPath, O_RDONLY | O_CLOEXEC)
            if walFD < 0 {
                logger.critical("cannot open the WAL to sync it", metadata: ["errno": "\(errno)"])
                return
            }
            let dirFD = open(directory, O_RDONLY | O_CLOEXEC)
            if dirFD >= 0 {
                fsync(dirFD)
                close(dirFD)
            }
        }
        if fdatasync(walFD) != 0 {
            // A failed sync cannot be retried safely (the kernel may have dropped the dirty pages): stop.
            logger.critical("fdatasync of the WAL failed; stopping to protect acknowledged data", metadata: ["errno": "\(errno)"])
            fatalError("fdatasync of the WAL failed (errno \(errno))")
        }
    }
}
