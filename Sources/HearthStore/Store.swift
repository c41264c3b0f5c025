import CSQLite
import Foundation
import HearthCore
import Logging

/// The SQLite storage: one writer thread that commits batches of jobs together (group commit) and a pool of
/// reader threads, each with its own connection, over one database file in WAL mode.
public final class Store: Sendable {
    /// How the store opens its file.
    public struct Configuration: Sendable {
        /// The folder holding the database file; created if missing.
        public var dataDirectory: String
        /// Durability of acknowledged writes. `normal` (default): acknowledged at commit, once the WAL holds
        /// it, like SQLite's `synchronous=NORMAL` (PocketBase's setting), so it survives a crash or `kill -9`
        /// of the process; the syncer also syncs the WAL within 50 ms of each commit, which bounds what a
        /// power loss can take. `full`: a request is acknowledged only after its commit is synced to disk, so
        /// it survives a power loss too (one sync covers every batch committed meanwhile), at the cost of a
        /// disk sync's latency on every write.
        public var synchronous: Synchronous = .normal
        /// Reader connections (and threads).
        public var readers: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)
        /// Most jobs committed in one SQLite transaction.
        public var groupCommitLimit: Int = 256
        /// When the WAL is checkpointed.
        public var walLimits = WALLimits()
        /// How many change-log rows to keep for listeners that resume.
        public var changeLogRetention: Int = 100_000
        /// Commits between two trims of the change log down to `changeLogRetention` rows (a trim runs in the
        /// commit's transaction). A trim also runs once a tenth of the retention was logged since the last, so that
        /// large commits never leave the log far past it.
        public var changeLogTrimInterval: Int = 100
        /// Composite indexes to keep (besides every single field); opening the store builds the entries of
        /// new ones and drops those of indexes no longer listed.
        public var compositeIndexes: [CompositeIndex] = []
        /// Single-field overrides (exemptions): opening the store rebuilds the single-field entries of every
        /// collection id whose overrides changed since the last start.
        public var fieldOverrides: [FieldOverride] = []
        /// Opens with the composite indexes and overrides the data folder was last served with, instead of
        /// the two above, and changes no entries: for tools that open a served folder's file (`hearth
        /// fixtures`, `hearth users` with no server running, `hearth import`), which do not know the server's
        /// index file, so that their writes keep the entries the server's do and nothing it reads is dropped.
        public var usesServedIndexDefinitions = false
        /// The writer connection's page cache, in bytes. Modest for a server: SQLite scans the whole cache's hash
        /// table at the end of every write transaction, so a large cache costs every small commit; `hearth import`,
        /// which commits rarely and much, takes a large one.
        public var writerPageCache = 8 << 20
        /// The page cache of each reader connection (`readers` of them), for queries and listings.
        public var readerPageCache = 32 << 20
        /// The page cache of each connection of the point-read pool (as many as `readers`, at least two).
        public var pointReaderPageCache = 16 << 20
        /// Index entries (single-field and composite) one document may need; Firestore's 40,000. Tests lower it.
        public var maxIndexEntriesPerDocument = Limits.maxIndexEntriesPerDocument
        /// When set, the store holds the data folder's lock while open (`DataFolderLock`), recorded under this
        /// name (`hearth serve`, `hearth import`, `hearth users`): each must be the folder's only owner, and
        /// opening a second owner there throws `DataFolderInUse`. Every store that writes sets it; tools act
        /// through a server that holds the folder instead of opening its file.
        public var dataFolderOwner: String?

        /// WAL sizes, in pages of 4 KiB, that trigger checkpoints. Passive checkpoints (off the writer) copy
        /// the WAL into the database file as it grows, but never let it start over while writes keep coming
        /// (each finds new frames behind it); a restarting checkpoint does, holding new commits back while it
        /// copies what is left and waits for readers to leave the WAL.
        public struct WALLimits: Sendable {
            /// Once the WAL holds this many pages, the syncer thread runs passive checkpoints back to back (each
            /// copying what the WAL gained since the one before) until the writer restarts the WAL
            /// (`restartPages`). A page rewritten by
            /// many commits between two checkpoints is copied to the database file once, so a larger threshold
            /// copies less, up to about this one. Checkpointing only once per threshold of new pages would copy
            /// less still, but leaves the writer's restart most of a WAL to copy while commits wait, which
            /// lengthens the tail of write latency, so the restart is kept cheap instead (`bench/README.md`,
            /// "Why the defaults are what they are").
            public var checkpointPages: Int32 = 16_000
            /// Past this, the writer restarts the WAL itself between two batches. Only the writer can: a
            /// restarting checkpoint on another connection waits for the write lock through SQLite's
            /// polling busy handler, which a writer committing back to back starves (and the syncer thread,
            /// blocked meanwhile, would delay background syncs and, at FULL, acknowledgements). Each restart holds
            /// commits back while it waits for the syncer's checkpoint in flight and copies what is left, longer
            /// as the database grows: 64,000 pages (256 MiB) halves how often that happens against 32,000, which
            /// shortens the tail of write latency under a saturated create load (`bench/README.md`).
            public var restartPages: Int32 = 64_000
            /// The defaults.
            public init() {}
        }

        /// The durability level of commits.
        public enum Synchronous: String, Sendable { case full = "FULL", normal = "NORMAL" }

        /// Makes a configuration for a data folder.
        public init(dataDirectory: String) { self.dataDirectory = dataDirectory }

        /// The database file's path.
        public var databasePath: String {
            dataDirectory.hasSuffix("/") ? dataDirectory + "hearth.sqlite" : dataDirectory + "/hearth.sqlite"
        }
    }

    /// The configuration the store was opened with.
    public let configuration: Configuration
    /// Running totals of reads.
    public let statistics = StoreStatistics()
    private let writer: WorkerThreads<WriterState>
    private let readers: WorkerThreads<SQLiteConnection>
    private let commitObservers = CommitObservers()
    private let pointReaders: ConnectionPool
    private let documentCache: DecodedDocumentCache
    private let syncer: Syncer
    /// Held while open when `Configuration.dataFolderOwner` is set.
    private let folderLock: DataFolderLock?
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

    /// Brings the field index's composite entries in line with the definitions: indexes new since the last
    /// start get entries for every stored document of their collection id, and indexes no longer defined
    /// lose theirs, in one transaction before the store serves anything.
    static func reconcile(_ composites: CompositeIndexes, on connection: SQLiteConnection, logger: Logger) throws {
        var stored: Set<[String]> = []
        let rows = try connection.prepare("SELECT entry_field, collection_id FROM composite_indexes")
        while try rows.step() { stored.insert([rows.text(0), rows.text(1)]) }
        rows.reset()
        let wanted = Set(composites.all.map { [$0.entryField, $0.collectionGroup] })
        if stored == wanted { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for gone in stored.subtracting(wanted) {
                // Another collection id may still use the same fields: drop only this one's scopes.
                try deleteEntries(on: connection, of: gone[1], where: "field = ?", gone[0])
                let d = try connection.prepare("DELETE FROM composite_indexes WHERE entry_field = ? AND collection_id = ?")
                d.bind(1, gone[0]); d.bind(2, gone[1])
                try d.run()
                logger.info("composite index dropped", metadata: ["index": "\(gone[1]) \(gone[0].dropFirst())"])
            }
            for index in composites.all where !stored.contains([index.entryField, index.collectionGroup]) {
                var count = 0
                try Schema.forEachStoredDocument(on: connection, collectionID: index.collectionGroup) { path, fields in
                    let entries = IndexEntry.compositeEntries(of: fields, indexes: [index])
                    try WriteContext.updateIndex(on: connection, path, removing: [], adding: entries)
                    count += 1
                }
                let i = try connection.prepare("INSERT INTO composite_indexes(entry_field, collection_id) VALUES (?, ?)")
                i.bind(1, index.entryField); i.bind(2, index.collectionGroup)
                try i.run()
                logger.info("composite index built", metadata: ["index": "\(index)", "documents": "\(count)"])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The composite indexes and overrides the entries were last built with (what `reconcile` and
    /// `reconcileOverrides` recorded).
    static func servedDefinitions(on connection: SQLiteConnection) throws -> CompositeIndexes {
        var indexes: [CompositeIndex] = []
        let rows = try connection.prepare("SELECT entry_field, collection_id FROM composite_indexes ORDER BY collection_id, entry_field")
        while try rows.step() {
            guard let index = CompositeIndex(entryField: rows.text(0), collectionGroup: rows.text(1)) else {
                throw HearthError.internal("the stored composite index '\(rows.text(0).dropFirst())' of '\(rows.text(1))' cannot be read")
            }
            indexes.append(index)
        }
        rows.reset()
        return CompositeIndexes(indexes, overrides: try storedOverrides(on: connection))
    }

    /// The single-field overrides the entries were last built with.
    static func storedOverrides(on connection: SQLiteConnection) throws -> [FieldOverride] {
        var overrides: [FieldOverride] = []
        let rows = try connection.prepare(
            "SELECT collection_id, field, value_entries, contains_entries FROM field_overrides ORDER BY collection_id, field")
        defer { rows.reset() }
        while try rows.step() {
            guard let field = try? FieldPath(parsing: rows.text(1)) else {
                throw HearthError.internal("the stored field override '\(rows.text(1))' of '\(rows.text(0))' cannot be read")
            }
            overrides.append(FieldOverride(collectionGroup: rows.text(0), field: field,
                                           indexing: FieldIndexing(values: rows.int(2) != 0, contains: rows.int(3) != 0)))
        }
        return overrides
    }

    /// Deletes the field-index rows of one collection id's scopes (its group's and each of its collections')
    /// whose `field` column meets `fieldCondition`, which takes `parameter`.
    static func deleteEntries(on connection: SQLiteConnection, of collectionID: String, where fieldCondition: String,
                              _ parameter: String) throws {
        let s = try connection.prepare("""
            DELETE FROM field_index WHERE \(fieldCondition) AND (scope = ? OR scope LIKE ? ESCAPE '\\' OR scope LIKE ? ESCAPE '\\')
            """)
        let id = likeEscaped(collectionID)
        s.bind(1, parameter); s.bind(2, "g" + collectionID); s.bind(3, "c%/" + id); s.bind(4, "c" + id)
        try s.run()
    }

    /// Brings the single-field entries in line with the overrides: each collection id whose overrides differ
    /// from those the entries were built with loses its single-field entries (not `__name__`'s, which every
    /// document keeps, nor the composite indexes') and gets them again for every stored document, in one
    /// transaction before the store serves anything.
    static func reconcileOverrides(_ definitions: CompositeIndexes, on connection: SQLiteConnection, logger: Logger) throws {
        let stored = Dictionary(grouping: try storedOverrides(on: connection), by: \.collectionGroup).mapValues(Set.init)
        let wanted = Dictionary(grouping: definitions.overrides, by: \.collectionGroup).mapValues(Set.init)
        let changed = Set(stored.keys).union(wanted.keys).filter { stored[$0] != wanted[$0] }
        if changed.isEmpty { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for id in changed.sorted() {
                // Single-field rows: not the composite indexes' (their marker) and not `__name__`'s.
                try deleteEntries(on: connection, of: id, where: "substr(field, 1, 1) <> ? AND field <> '\(IndexEntry.nameField)'",
                                  CompositeIndex.marker)
                let overrides = definitions.overrides(of: id)
                var count = 0
                try Schema.forEachStoredDocument(on: connection, collectionID: id) { path, fields in
                    let entries = try IndexEntry.entries(of: fields, limit: .max, overrides: overrides)
                    try WriteContext.updateIndex(on: connection, path, removing: [], adding: entries)
                    count += 1
                }
                let d = try connection.prepare("DELETE FROM field_overrides WHERE collection_id = ?")
                d.bind(1, id)
                try d.run()
                for o in wanted[id] ?? [] {
                    let i = try connection.prepare(
                        "INSERT INTO field_overrides(collection_id, field, value_entries, contains_entries) VALUES (?, ?, ?, ?)")
                    i.bind(1, id); i.bind(2, o.field.description)
                    i.bind(3, Int64(o.indexing.values ? 1 : 0)); i.bind(4, Int64(o.indexing.contains ? 1 : 0))
                    try i.run()
                }
                logger.info("field overrides applied: single-field index entries rebuilt",
                            metadata: ["collectionGroup": "\(id)", "overrides": "\(wanted[id]?.count ?? 0)", "documents": "\(count)"])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }

    /// Records in the data folder's owner record where this store's server answers (its loopback URL), so that
    /// tools act through it instead of opening the file (`DataFolderInUse.address`). Nothing without the lock.
    public func recordOwnerAddress(_ address: String) {
        folderLock?.record(address: address)
    }

    /// Adds an observer told of every committed change, in commit order, after the commit is durable; it is
    /// kept until removed. Observers are told in the order they were added.
    public func add(commitObserver observer: any CommitObserver) {
        commitObservers.add(observer)
    }

    /// Stops telling an observer of commits.
    public func remove(commitObserver observer: any CommitObserver) {
        commitObservers.remove(observer)
    }

    /// Runs a read on a reader thread. Reads see the last committed state, field index included: a write's
    /// index rows are committed with it.
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReadContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            read(body) { continuation.resume(with: $0) }
        }
    }

    /// `read(_:)` for callers that are not tasks: `completion` runs once, on the reader thread, with the result.
    /// It must not block.
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReadContext) throws -> T,
                                  completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        // The job holds the parts of the store it uses.
        let accepted = readers.submit { [statistics, composites] connection in
            completion(Result { try body(ReadContext(connection: connection, statistics: statistics, composites: composites)) })
        }
        if !accepted { completion(.failure(HearthError.unavailable("the server is shutting down"))) }
    }

    /// The decoded document at `path` (nil when missing) for a security rule's `get()` or `exists()` outside
    /// a transaction, on the calling thread: from a cache that this process's commits keep exact (see
    /// `DecodedDocumentCache`), else a point read.
    public func ruleLookup(_ path: DocumentPath) throws -> Document? {
        try documentCache.document(at: path) { try pointRead { try $0.document(at: path) } }
    }

    /// Runs a short, bounded read (a lookup by key) on the calling thread, with a pooled connection.
    ///
    /// A point read takes microseconds, less than the two thread switches of a hop to a reader thread; reads
    /// that scan (listings, queries) use `read` instead.
    public func pointRead<T>(_ body: (ReadContext) throws -> T) throws -> T {
        try pointReaders.with { connection in try body(ReadContext(connection: connection, statistics: statistics, composites: composites)) }
    }

    /// Runs a read on the calling thread like `pointRead`, for reads that are usually short but could be long
    /// (a query): once SQLite has run about `instructions` virtual-machine instructions for it, the read stops
    /// and throws `ReadBudgetExceeded`, and the caller can run it again with `read`. A read that reaches the
    /// bound never returns a value, even one its body made from interrupted statements.
    public func boundedRead<T>(instructions: Int, _ body: (ReadContext) throws -> T) throws -> T {
        try pointReaders.with { connection in
            let (result, exceeded) = connection.withInstructionLimit(instructions) {
                try body(ReadContext(connection: connection, statistics: statistics, composites: composites))
            }
            // An interrupted statement may have ended a transaction the body meant to close itself.
            if sqlite3_get_autocommit(connection.handle) == 0 { try? connection.execute("ROLLBACK") }
            if exceeded { throw ReadBudgetExceeded() }
            return try result.get()
        }
    }

    /// Runs a write job on the writer thread, inside a transaction shared with other queued jobs; the job's
    /// effects are rolled back alone if it throws. Returns once the commit is durable.
    public func write<T: Sendable>(_ body: @escaping @Sendable (WriteContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            write(body) { continuation.resume(with: $0) }
        }
    }

    /// `write(_:)` for callers that are not tasks (an event loop answering a request itself): `completion`
    /// runs once, on the writer thread, when the commit is durable or the job failed. It must not block.
    public func write<T: Sendable>(_ body: @escaping @Sendable (WriteContext) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let accepted = writer.submit { state in
            // Runs inside the batch: `state.current` is set by `runBatch`.
            let job = state.current!
            do {
                let value = try body(job.context)
                job.onCommit = { error in
                    if let error { completion(.failure(error)) } else { completion(.success(value)) }
                }
            } catch {
                job.failed = true
                job.onCommit = { _ in completion(.failure(error)) }
            }
        }
        if !accepted { completion(.failure(HearthError.unavailable("the server is shutting down"))) }
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

/// One job in a group commit.
final class WriteJobState {
    let context: WriteContext
    var failed = false
    var onCommit: ((_ error: (any Error)?) -> Void)?

    init(context: WriteContext) { self.context = context }
}

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
            for state in states { state.onCommit?(state.failed ? nil : commitError) }
            if !published.isEmpty { syncer.publish(published) }
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

/// A read run with `Store.boundedRead` needed more work than its bound.
public struct ReadBudgetExceeded: Error {
    public init() {}
}

/// Connections any thread may borrow for a moment.
final class ConnectionPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: [SQLiteConnection]

    init(_ connections: [SQLiteConnection]) { free = connections }

    func with<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        condition.lock()
        while free.isEmpty { condition.wait() }
        let connection = free.removeLast()
        condition.unlock()
        defer {
            condition.lock()
            free.append(connection)
            condition.signal()
            condition.unlock()
        }
        return try body(connection)
    }
}
