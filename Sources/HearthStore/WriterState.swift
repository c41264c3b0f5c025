import CSQLite
import HearthCore
import HearthSQLite
import Logging

/// The writer thread's connection and clock.
final class WriterState: @unchecked Sendable {
    let connection: SQLiteConnection
    var lastCommitTime: Int64
    var current: WriteJobState?
    var wantsCheckpoint = false
    let retention: Int
    let trimInterval: Int
    var commitsSinceTrim = 0
    var changesSinceTrim = 0
    let composites: CompositeIndexes
    let maxIndexEntries: Int
    let documentCache: DecodedDocumentCache
    /// Documents changed by the batch under way (committed or not): the cache does not speak for them.
    var batchChanged: Set<DocumentPath> = []

    init(connection: SQLiteConnection, retention: Int, trimInterval: Int, composites: CompositeIndexes, maxIndexEntries: Int,
         documentCache: DecodedDocumentCache) throws {
        self.connection = connection
        self.documentCache = documentCache
        self.retention = retention
        self.trimInterval = trimInterval
        self.composites = composites
        self.maxIndexEntries = maxIndexEntries
        let a = try connection.scalarInt("SELECT coalesce(max(commit_time), 0) FROM changes") ?? 0
        let b = try connection.scalarInt("SELECT coalesce(max(update_time), 0) FROM documents") ?? 0
        lastCommitTime = max(a, b)
    }

    /// A commit time later than every earlier one, close to the wall clock.
    func nextCommitTime() -> Timestamp {
        let now = Timestamp.now().microseconds
        lastCommitTime = max(now, lastCommitTime + 1)
        return Timestamp(microseconds: lastCommitTime)
    }

    func runBatch(_ jobs: [@Sendable (WriterState) -> Void], syncer: Syncer, logger: Logger) {
        var states: [WriteJobState] = []
        states.reserveCapacity(jobs.count)
        var changes: [ChangeRecord] = []
        batchChanged.removeAll(keepingCapacity: true)
        defer { batchChanged.removeAll(keepingCapacity: true) }
        do {
            try connection.prepare("BEGIN IMMEDIATE").run()
        } catch {
            logger.error("cannot begin a write transaction", metadata: ["error": "\(error)"])
            for job in jobs {
                let state = WriteJobState(context: WriteContext(connection: connection, writer: self))
                current = state
                job(self)
                state.onCommit?(HearthError.internal())
            }
            current = nil
            return
        }
        for job in jobs {
            let context = WriteContext(connection: connection, writer: self)
            let state = WriteJobState(context: context)
            current = state
            try? connection.prepare("SAVEPOINT job").run()
            job(self)
            if state.failed {
                try? connection.prepare("ROLLBACK TO job").run()
            } else {
                changes.append(contentsOf: context.changes)
            }
            try? connection.prepare("RELEASE job").run()
            states.append(state)
        }
        current = nil
        var commitError: (any Error)?
        do {
            if !changes.isEmpty {
                commitsSinceTrim += 1
                changesSinceTrim += changes.count
                if commitsSinceTrim >= trimInterval || changesSinceTrim >= max(1, retention / 10) {
                    commitsSinceTrim = 0
                    changesSinceTrim = 0
                    try trimChangeLog()
                }
            }
            try connection.prepare("COMMIT").run()
        } catch {
            logger.error("commit failed", metadata: ["error": "\(error)"])
            try? connection.execute("ROLLBACK")
            commitError = HearthError.internal()
        }
        let published = commitError == nil ? changes : []
        if !published.isEmpty { documentCache.invalidate(published) }
        if syncer.syncsWAL {
            // Acknowledge only once the batch is durable: the syncer syncs the WAL, then runs these in order.
            let completions: [() -> Void] = states.map { state in { state.onCommit?(state.failed ? nil : commitError) } }
            syncer.enqueue(Syncer.Batch(completions: completions, changes: published))
        } else {
            // Observers first: a commit acknowledged is one the listeners' feed already holds.
            if !published.isEmpty { syncer.publish(published) }
            for state in states { state.onCommit?(state.failed ? nil : commitError) }
        }
        if wantsCheckpoint {
            syncer.checkpoint(connection, mode: "TRUNCATE")
            wantsCheckpoint = false
        } else {
            syncer.restartIfOversized(connection)
        }
    }

    /// Reports the WAL's size after each commit to the syncer, which checkpoints; this also turns off
    /// SQLite's own checkpoints on the writer's connection, so commits never wait for one.
    func installWALHook(_ syncer: Syncer) {
        sqlite3_wal_hook(connection.handle, { context, _, _, pages in
            Unmanaged<Syncer>.fromOpaque(context!).takeUnretainedValue().walSize(pages)
            return SQLITE_OK
        }, Unmanaged.passUnretained(syncer).toOpaque())
    }

    func trimChangeLog() throws {
        // Never past `index_state.pending_from`, which an earlier version's server running beside this process
        // may still need (`restoreRowsHeldByAnEarlierVersion`).
        let s = try connection.prepare("""
            DELETE FROM changes WHERE seq <= (SELECT max(seq) FROM changes) - ?
                AND seq < coalesce((SELECT pending_from FROM index_state), 9223372036854775807)
            """)
        s.bind(1, Int64(retention))
        try s.run()
    }
}
