import HearthCore
import HearthStore

/// The store's read context as the engine's `DocumentReader`.
struct SQLiteDocumentReader: DocumentReader {
    let context: ReadContext

    func document(at path: DocumentPath) throws -> StoredDocument? { try context.document(at: path) }

    func anyDocument(from lower: String, through upper: String) throws -> Bool {
        try context.anyDocument(from: lower, through: upper)
    }

    func documents(in collection: CollectionPath, after afterID: String?, limit: Int) throws -> [StoredDocument] {
        try context.documents(in: collection, after: afterID, limit: limit)
    }

    func descendantPaths(of path: DocumentPath) throws -> [DocumentPath] { try context.descendantPaths(of: path) }

    func collectionIDs(under parent: DocumentPath?) throws -> [String] { try context.collectionIDs(under: parent) }

    func runQuery(_ query: Query) throws -> [StoredDocument] { try context.runQuery(query) }

    func queryDocuments(_ query: Query) throws -> [Document] { try context.queryDocuments(query) }

    func runAggregate(_ aggregate: AggregateQuery, returningDocuments: Bool) throws
        -> (result: [String: Value], documents: [StoredDocument]) {
        try context.runAggregate(aggregate, returningDocuments: returningDocuments)
    }

    func allDocuments(after afterPath: String?, limit: Int) throws -> [StoredDocument] {
        try context.allDocuments(after: afterPath, limit: limit)
    }

    func importProgress(source: String) throws -> ImportProgress? { try context.importProgress(source: source) }

    func oldestRetainedSequence() throws -> Int64? { try context.oldestRetainedSequence() }

    func changes(after: Int64, through: Int64) throws -> [ChangeRecord] { try context.changes(after: after, through: through) }

    func lastChange(to path: DocumentPath, atOrBefore sequence: Int64) throws -> ChangeRecord? {
        try context.lastChange(to: path, atOrBefore: sequence)
    }

    func change(atSequence sequence: Int64) throws -> ChangeRecord? { try context.change(atSequence: sequence) }

    func file(at path: FilePath) throws -> StoredFile? { try context.file(at: path) }

    func files(prefix: String, from start: [UInt8]?, inclusive: Bool, limit: Int) throws -> [StoredFile] {
        try context.files(prefix: prefix, from: start, inclusive: inclusive, limit: limit)
    }

    func fileBlobNamed(_ sha256: [UInt8]) throws -> Bool { try context.fileBlobNamed(sha256) }

    func dueFunctionEvents(now: Timestamp, skipping: Set<Int64>, excluding: Set<String>, limit: Int) throws -> [FunctionEventRecord] {
        try context.dueFunctionEvents(now: now, skipping: skipping, excluding: excluding, limit: limit)
    }

    func functionEvents(dead: Bool, after: Int64, limit: Int) throws -> [FunctionEventRecord] {
        try context.functionEvents(dead: dead, after: after, limit: limit)
    }

    func functionEvent(id: String) throws -> FunctionEventRecord? { try context.functionEvent(id: id) }
}
