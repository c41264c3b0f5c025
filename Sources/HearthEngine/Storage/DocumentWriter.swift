import HearthCore

/// What a write job may do inside the writer's transaction (`DocumentStorage.write`).
public protocol DocumentWriter {
    /// Reads inside the writer's transaction: they see this transaction's earlier writes.
    var reader: any DocumentReader { get }
    /// A commit time later than every earlier one, close to the wall clock.
    func nextCommitTime() -> Timestamp
    /// The decoded document at `path` as this transaction sees it, for a rule's `get()` or `exists()`.
    func ruleLookup(_ path: DocumentPath) throws -> Document?
    /// Stores a document whose fields the caller holds, with `previous` the fields stored before (nil when
    /// the document did not exist), so that only the index entries that differ change; `prepared`, when given,
    /// was made from `fields` (`DocumentStorage.prepare`).
    func put(_ document: StoredDocument, fields: [String: Value], prepared: PreparedFields?, previous: [String: Value]?,
             commitTime: Timestamp) throws
    /// Deletes a document whose stored fields the caller holds (nil: known missing); returns whether it existed.
    @discardableResult
    func delete(_ path: DocumentPath, previous: [String: Value]?, commitTime: Timestamp) throws -> Bool
    /// Records an import's progress, in the transaction of the batch it accounts for.
    func record(_ progress: ImportProgress) throws
    /// Forgets the progress recorded for an import's input file.
    func forgetImport(source: String) throws
    /// Stores an object's metadata, replacing any under its name; its bytes must already be durable.
    func putFile(_ file: StoredFile) throws
    /// Deletes an object's metadata; returns whether it existed.
    @discardableResult
    func deleteFile(_ path: FilePath) throws -> Bool
    /// Queues function events in this transaction.
    func addFunctionEvents(_ events: [FunctionEventRecord]) throws
    /// Removes a pending function event (delivered); answers whether it was pending, and whether later events
    /// of its ordering key are pending.
    @discardableResult
    func removePendingFunctionEvent(id: String) throws -> (removed: Bool, laterPending: Bool)
    /// Records an attempt's outcome on a pending function event (dead when `deadAt` is set); returns whether it was pending.
    @discardableResult
    func recordFunctionEventAttempt(id: String, attempts: Int, nextAttemptAt: Timestamp, lastError: String,
                                    deadAt: Timestamp?) throws -> Bool
    /// Makes a dead function event pending again, due and queued at `now`; returns whether it was dead.
    @discardableResult
    func requeueDeadFunctionEvent(id: String, now: Timestamp) throws -> Bool
    /// Arms the timer `name` of the document at `path` for `due`, replacing its earlier time, or drops it (nil).
    func setFunctionTimer(name: String, path: String, due: Timestamp?) throws
    /// Records the slot a schedule last fired.
    func setFunctionSchedule(name: String, _ state: FunctionScheduleState) throws
}
