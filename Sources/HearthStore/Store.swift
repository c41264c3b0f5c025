import Foundation
import HearthCore
import HearthSQLite
import Logging

/// The SQLite storage: one writer thread that commits batches of jobs together (group commit) and a pool of
/// reader threads, each with its own connection, over one database file in WAL mode.
public final class Store: Sendable {
    /// The configuration the store was opened with.
    public let configuration: Configuration
    /// Running totals of reads.
    public let statistics = StoreStatistics()
    let writer: WorkerThreads<WriterState>
    let readers: WorkerThreads<SQLiteConnection>
    let commitObservers = CommitObservers()
    let pointReaders: ConnectionPool
    let documentCache: DecodedDocumentCache
    let syncer: Syncer
    /// Held while open when `Configuration.dataFolderOwner` is set.
    let folderLock: DataFolderLock?
    /// The composite indexes in force (`Configuration.compositeIndexes`).
    public let composites: CompositeIndexes

    /// Opens the store, creating and migrating the database file as needed.
    public init(configuration: Configuration, logger: Logger = Logger(label: "hearth.store")) throws {
        self.configuration = configuration
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        // Before anything reads or clears the earlier version's mark below.
        folderLock = try configuration.dataFolderOwner.map { try DataFolderLock(directory: configuration.dataDirectory, owner: $0) }
        let path = configuration.databasePath
        // The writer's connection gathers each commit's WAL frames into one write instead of two per frame;
        // what reaches the disk, and when, is the same (`wal_buffer.c`).
        let writeConnection = try SQLiteConnection(path: path, gathersWALWrites: true)
        try writeConnection.execute("PRAGMA journal_mode=WAL")
        // The syncer thread provides the per-commit sync of `full`; SQLite itself runs at NORMAL either way.
        try writeConnection.execute("PRAGMA synchronous=NORMAL")
        // `writerPageCache`: SQLite scans the whole cache at the end of each commit (`bench/README.md`); the OS
        // page cache keeps the rest of the file warm.
        try writeConnection.execute("PRAGMA cache_size=-\(max(1, configuration.writerPageCache >> 10)); PRAGMA temp_store=MEMORY")
        // After a checkpoint restarts the WAL, SQLite truncates the file to this size, so a burst of writes
        // does not leave a huge WAL on disk. Kept above the restart threshold: a WAL that is cut back and
        // grown again allocates blocks on every append, and those appends then wait on the filesystem's
        // journal while a checkpoint syncs the database file (`bench/README.md`).
        try writeConnection.execute("PRAGMA journal_size_limit=268435456")
        try Schema.migrate(writeConnection)
        if configuration.usesServedIndexDefinitions {
            composites = try Self.servedDefinitions(on: writeConnection)
        } else {
            composites = CompositeIndexes(configuration.compositeIndexes, overrides: configuration.fieldOverrides)
            try Self.reconcile(composites, on: writeConnection, logger: logger)
            try Self.reconcileOverrides(composites, on: writeConnection, logger: logger)
        }
        // Rows an earlier version's server held in memory when it stopped uncleanly; only the folder's owner
        // clears the mark (a tool may run beside such a server while it still holds rows).
        try Self.restoreRowsHeldByAnEarlierVersion(on: writeConnection, composites: composites,
                                                   clearing: folderLock != nil, logger: logger)
        let documentCache = DecodedDocumentCache()
        self.documentCache = documentCache
        let state = try WriterState(connection: writeConnection, retention: configuration.changeLogRetention,
                                    trimInterval: max(1, configuration.changeLogTrimInterval),
                                    composites: composites, maxIndexEntries: configuration.maxIndexEntriesPerDocument,
                                    documentCache: documentCache)
        var readConnections: [SQLiteConnection] = []
        for _ in 0..<max(1, configuration.readers) {
            let c = try SQLiteConnection(path: path)
            try c.execute("PRAGMA cache_size=-\(max(1, configuration.readerPageCache >> 10)); PRAGMA temp_store=MEMORY; PRAGMA query_only=1")
            readConnections.append(c)
        }
        let checkpointConnection = try SQLiteConnection(path: path)
        try checkpointConnection.execute("PRAGMA synchronous=NORMAL")
        let syncer = Syncer(databasePath: path, directory: configuration.dataDirectory,
                            syncWAL: configuration.synchronous == .full, limits: configuration.walLimits,
                            observers: commitObservers, checkpointConnection: checkpointConnection, logger: logger)
        self.syncer = syncer
        state.installWALHook(syncer)
        var pointConnections: [SQLiteConnection] = []
        for _ in 0..<max(2, configuration.readers) {
            let c = try SQLiteConnection(path: path)
            try c.execute("PRAGMA cache_size=-\(max(1, configuration.pointReaderPageCache >> 10)); PRAGMA query_only=1")
            pointConnections.append(c)
        }
        pointReaders = ConnectionPool(pointConnections)
        readers = WorkerThreads(name: "hearth-reader", resources: readConnections)
        writer = WorkerThreads(name: "hearth-writer", resources: [state], batchLimit: configuration.groupCommitLimit,
                               batchBody: { jobs, state in state.runBatch(jobs, syncer: syncer, logger: logger) })
    }

    /// Records in the data folder's owner record where this store's server answers (its loopback URL) and, for
    /// HTTPS, its certificate file, so that tools act through it instead of opening the file
    /// (`DataFolderInUse.address`). Nothing without the lock.
    public func recordOwnerAddress(_ address: String, certificate: String? = nil) {
        folderLock?.record(address: address, certificate: certificate)
    }

    /// Finishes queued work, checkpoints the WAL into the database file and stops the threads.
    public func close() {
        readers.shutdown()
        _ = writer.submit { state in
            let job = state.current!
            job.onCommit = { _ in }
            state.wantsCheckpoint = true
        }
        writer.shutdown()
        syncer.shutdown()
        folderLock?.release()
    }

    /// The database's size on disk (file plus WAL), in bytes.
    public func sizeOnDisk() -> Int64 {
        let fm = FileManager.default
        var total: Int64 = 0
        for suffix in ["", "-wal", "-shm"] {
            if let attrs = try? fm.attributesOfItem(atPath: configuration.databasePath + suffix),
               let size = attrs[.size] as? NSNumber {
                total += size.int64Value
            }
        }
        return total
    }
}
