import Foundation
import HearthCore

extension Store {
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
}
