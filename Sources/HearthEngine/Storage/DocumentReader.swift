import HearthCore

/// The reads the engine makes inside one of the storage's reads (`DocumentStorage.read`).
public protocol DocumentReader {
    /// The document at a path, or nil.
    func document(at path: DocumentPath) throws -> StoredDocument?
    /// Whether any document is stored whose path's text lies between `lower` and `upper` (both included, in
    /// UTF-8 byte order).
    func anyDocument(from lower: String, through upper: String) throws -> Bool
    /// A page of a collection's documents in id order, after `afterID` when given.
    func documents(in collection: CollectionPath, after afterID: String?, limit: Int) throws -> [StoredDocument]
    /// The paths of every document below `path`, at any depth.
    func descendantPaths(of path: DocumentPath) throws -> [DocumentPath]
    /// The ids of the collections directly under `parent` (the root when nil).
    func collectionIDs(under parent: DocumentPath?) throws -> [String]
    /// A query's documents, as stored (projected when the query selects fields).
    func runQuery(_ query: Query) throws -> [StoredDocument]
    /// The documents a query returns, whole and decoded (`select` is ignored): what a listener's view holds.
    func queryDocuments(_ query: Query) throws -> [Document]
    /// An aggregation's results by alias, and (when `returningDocuments`) the documents it aggregated.
    func runAggregate(_ aggregate: AggregateQuery, returningDocuments: Bool) throws
        -> (result: [String: Value], documents: [StoredDocument])
    /// A page of every document in path order, after `afterPath` when given (export).
    func allDocuments(after afterPath: String?, limit: Int) throws -> [StoredDocument]
    /// The progress recorded for an import's input file, if any.
    func importProgress(source: String) throws -> ImportProgress?
    /// The oldest sequence number the change log still holds, or nil when it is empty.
    func oldestRetainedSequence() throws -> Int64?
    /// The logged changes with `after < sequence <= through`, in order.
    func changes(after: Int64, through: Int64) throws -> [ChangeRecord]
    /// The last logged change to a document at or before a sequence number, if the log still holds one.
    func lastChange(to path: DocumentPath, atOrBefore sequence: Int64) throws -> ChangeRecord?
    /// The logged change with this sequence number, if the log still holds it.
    func change(atSequence sequence: Int64) throws -> ChangeRecord?
    /// The stored object named `path`, or nil.
    func file(at path: FilePath) throws -> StoredFile?
    /// Up to `limit` stored objects whose names start with `prefix`, in name (UTF-8 byte) order, from `start`
    /// on: names after `start`, or from it when `inclusive`.
    func files(prefix: String, from start: [UInt8]?, inclusive: Bool, limit: Int) throws -> [StoredFile]
    /// Whether any stored object names the bytes with this SHA-256.
    func fileBlobNamed(_ sha256: [UInt8]) throws -> Bool
    /// Up to `limit` pending function events due at `now`, each the first pending one of its ordering key, in
    /// sequence order, skipping the sequences in `skipping` (those in flight) and the events of the endpoints in
    /// `excluding` (those with as many attempts in flight as they may have).
    func dueFunctionEvents(now: Timestamp, skipping: Set<Int64>, excluding: Set<String>, limit: Int) throws -> [FunctionEventRecord]
    /// Up to `limit` pending (or dead) function events after sequence `after`, in sequence order.
    func functionEvents(dead: Bool, after: Int64, limit: Int) throws -> [FunctionEventRecord]
    /// The function event with this id, or nil.
    func functionEvent(id: String) throws -> FunctionEventRecord?
    /// Up to `limit` function timers due at `now`, earliest first.
    func dueFunctionTimers(now: Timestamp, limit: Int) throws -> [FunctionTimerRecord]
    /// When the earliest pending function timer is due, or nil when none is.
    func nextFunctionTimer() throws -> Timestamp?
    /// How many function timers are pending.
    func functionTimerCount() throws -> Int
    /// When the timer `name` of the document at `path` is due, or nil when it is not armed.
    func functionTimer(name: String, path: String) throws -> Timestamp?
    /// What is kept of a schedule (the slot it last fired), or nil when it never ran.
    func functionSchedule(name: String) throws -> FunctionScheduleState?
}
