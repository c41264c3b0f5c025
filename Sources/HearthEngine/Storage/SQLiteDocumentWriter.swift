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
}
