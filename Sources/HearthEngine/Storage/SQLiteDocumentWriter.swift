import HearthCore
import HearthStore

/// The store's write context as the engine's `DocumentWriter`.
struct SQLiteDocumentWriter: DocumentWriter {
    let context: WriteContext

    var reader: any DocumentReader { SQLiteDocumentReader(context: context.reader) }

    func nextCommitTime() -> Timestamp { context.nextCommitTime() }

    func ruleLookup(_ path: DocumentPath) throws -> Document? { try context.ruleLookup(path) }

    func put(_ document: StoredDocument, fields: [String: Value], prepared: PreparedFields?, previous: [String: Value]?,
             commitTime: Timestamp) throws {
        try context.put(document, fields: fields, entries: prepared?.index as? Store.PreparedEntries, previous: previous,
                        commitTime: commitTime)
    }

    @discardableResult
    func delete(_ path: DocumentPath, previous: [String: Value]?, commitTime: Timestamp) throws -> Bool {
        try context.delete(path, previous: previous, commitTime: commitTime)
    }

    func record(_ progress: ImportProgress) throws { try context.record(progress) }

    func forgetImport(source: String) throws { try context.forgetImport(source: source) }

    func putFile(_ file: StoredFile) throws { try context.putFile(file) }

    @discardableResult
    func deleteFile(_ path: FilePath) throws -> Bool { try context.deleteFile(path) }

    func addFunctionEvents(_ events: [FunctionEventRecord]) throws { try context.addFunctionEvents(events) }

    @discardableResult
    func removePendingFunctionEvent(id: String) throws -> (removed: Bool, laterPending: Bool) {
        try context.removePendingFunctionEvent(id: id)
    }

    @discardableResult
    func recordFunctionEventAttempt(id: String, attempts: Int, nextAttemptAt: Timestamp, lastError: String,
                                    deadAt: Timestamp?) throws -> Bool {
        try context.recordFunctionEventAttempt(id: id, attempts: attempts, nextAttemptAt: nextAttemptAt,
                                               lastError: lastError, deadAt: deadAt)
    }

    @discardableResult
    func requeueDeadFunctionEvent(id: String, now: Timestamp) throws -> Bool {
        try context.requeueDeadFunctionEvent(id: id, now: now)
    }
}
