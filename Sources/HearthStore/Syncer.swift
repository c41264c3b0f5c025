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
/// It is also where changes reach the commit hook (the listeners' feed), strictly in the change log's order,
/// each once, including changes that another process (`hearth fixtures load`, `hearth users ...`) committed
/// to the same database: the writer hands over the rows logged between its last batch and its new one with
/// that batch, and this thread looks for such rows every `foreignPollInterval` when nothing else happens.
final class Syncer: @unchecked Sendable {
    struct Batch {
        let completions: [() -> Void]
        let changes: [ChangeRecord]
    }

    private let condition = NSCondition()
    private var pending: [Batch] = []
    /// Held by whoever hands changes to the hook (the writer from just before its `COMMIT`, the poll), so
    /// that every change is handed over once and in order.
    private let sequenceLock = NSLock()
    /// The change log's sequence number of the last change handed over.
    private var lastHandedOver: Int64
    /// How often this thread looks for changes another process committed, when idle.
    static let foreignPollInterval: TimeInterval = 0.25
    private let documentCache: DecodedDocumentCache
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
    private let hook: CommitHookBox
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
         hook: CommitHookBox, checkpointConnection: SQLiteConnection, documentCache: DecodedDocumentCache,
         logger: Logger) throws {
        lastHandedOver = try ReadContext.lastSequence(on: checkpointConnection)
        self.documentCache = documentCache
        self.limits = limits
        walPath = databasePath + "-wal"
        self.directory = directory
        self.syncWAL = syncWAL
        self.hook = hook
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

    /// Runs the writer's `COMMIT` and the hand-over of its batch as one step for the hook: `body` commits,
    /// then hands its batch's changes (and acknowledgements) over with `handOver`, which puts first the
    /// changes other processes logged since the last hand-over. A poll waits meanwhile, so it can neither
    /// take this batch's rows for another process's nor hand over later rows before them.
    func committing<T>(_ body: (_ handOver: (_ changes: [ChangeRecord], _ connection: SQLiteConnection) -> [ChangeRecord]) -> T) -> T {
        sequenceLock.lock()
        defer { sequenceLock.unlock() }
        return body { changes, connection in
            guard let first = changes.first?.sequence else { return changes }
            var all = changes
            if first > lastHandedOver + 1 {
                do {
                    let foreign = try ReadContext.changes(on: connection, after: lastHandedOver, through: first - 1)
                    handleTrimmed(foreign, after: lastHandedOver, through: first - 1)
                    all = foreign + changes
                } catch {
                    logger.error("cannot read other processes' changes from the change log; listeners miss them",
                                 metadata: ["after": "\(lastHandedOver)", "through": "\(first - 1)", "error": "\(error)"])
                }
            }
            lastHandedOver = changes.last!.sequence
            return all
        }
    }

    /// Another process that logs more changes than the log keeps (`Store.Configuration.changeLogRetention`)
    /// between two looks trims some before this server reads them. Which documents they changed is unknown,
    /// so every decoded document is dropped and the hook's owner is told (`Store.onChangesMissed`) before the
    /// changes after the gap reach it: the listeners' feed then reads every view again.
    private func handleTrimmed(_ foreign: [ChangeRecord], after: Int64, through: Int64) {
        let first = foreign.first?.sequence ?? through + 1
        guard first > after + 1 else { return }
        logger.warning("changes another process made were trimmed from the change log before this server read them; listeners read their results again",
                       metadata: ["missed": "\(first - after - 1)"])
        documentCache.invalidateAll()
        hook.callMissed()
    }

    /// Publishes changes that need no sync first (`normal` durability), in commit order. Called inside
    /// `committing`.
    func publish(_ changes: [ChangeRecord]) {
        hook.call(changes)
    }

    /// Hands over the changes other processes committed since the last hand-over, if any.
    private func pollForeignChanges() {
        sequenceLock.lock()
        defer { sequenceLock.unlock() }
        let foreign: [ChangeRecord]
        do {
            let latest = try ReadContext.lastSequence(on: checkpointConnection)
            guard latest > lastHandedOver else { return }
            foreign = try ReadContext.changes(on: checkpointConnection, after: lastHandedOver, through: latest)
            handleTrimmed(foreign, after: lastHandedOver, through: latest)
            lastHandedOver = latest
        } catch {
            logger.warning("cannot read the change log for other processes' changes", metadata: ["error": "\(error)"])
            return
        }
        guard !foreign.isEmpty else { return }
        documentCache.invalidate(foreign)
        if syncWAL {
            enqueue(Batch(completions: [], changes: foreign))
        } else {
            hook.call(foreign)
        }
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
        var nextPoll = Date(timeIntervalSinceNow: Self.foreignPollInterval)
        while true {
            condition.lock()
            while pending.isEmpty && !stopping && walPages < limits.checkpointPages && !dirty {
                if !condition.wait(until: nextPoll) { break }
            }
            if Date() >= nextPoll {
                condition.unlock()
                pollForeignChanges()
                nextPoll = Date(timeIntervalSinceNow: Self.foreignPollInterval)
                condition.lock()
            }
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
                for batch in batches {
                    for completion in batch.completions { completion() }
                }
                for batch in batches where !batch.changes.isEmpty { hook.call(batch.changes) }
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
