import HearthCore
import HearthStore

/// The SQLite store as the engine's `DocumentStorage`: each call goes to the store as it is, with the store's
/// read and write contexts behind `DocumentReader` and `DocumentWriter`.
package final class SQLiteDocumentStorage: DocumentStorage {
    /// The store underneath (for the composition root and the store's own tests).
    package let store: Store

    /// Stored objects' bytes, under the data folder's `files/`.
    package let blobs: any BlobStorage
    /// Resumable uploads in progress, under the data folder's `files/uploads/`.
    package let uploads: any UploadStorage

    /// Serves the engine from an open store.
    package init(_ store: Store) {
        self.store = store
        blobs = DiskBlobStorage(directory: store.configuration.dataDirectory + "/files")
        uploads = DiskUploadStorage(directory: store.configuration.dataDirectory + "/files/uploads")
    }

    package func read<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader) throws -> T,
                                  completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        store.read({ try body(SQLiteDocumentReader(context: $0)) }, completion: completion)
    }

    package func pointRead<T>(_ body: (any DocumentReader) throws -> T) throws -> T {
        try store.pointRead { try body(SQLiteDocumentReader(context: $0)) }
    }

    package func boundedRead<T>(instructions: Int, _ body: (any DocumentReader) throws -> T) throws -> T {
        try store.boundedRead(instructions: instructions) { try body(SQLiteDocumentReader(context: $0)) }
    }

    package func readAtPosition<T: Sendable>(_ body: @escaping @Sendable (any DocumentReader, LogPosition) throws -> T) async throws -> T {
        try await store.readAtPosition { context, position in try body(SQLiteDocumentReader(context: context), position) }
    }

    package func write<T: Sendable>(_ body: @escaping @Sendable (any DocumentWriter) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        store.write({ try body(SQLiteDocumentWriter(context: $0)) }, completion: completion)
    }

    package func prepare(_ fields: [String: Value], at path: DocumentPath) -> PreparedFields? {
        guard let entries = try? store.indexEntries(of: fields, at: path) else { return nil }
        return PreparedFields(encoded: Value.encodeFields(fields), index: entries)
    }

    package func ruleLookup(_ path: DocumentPath) throws -> Document? { try store.ruleLookup(path) }

    package func add(commitObserver observer: any CommitObserver) { store.add(commitObserver: observer) }

    package func remove(commitObserver observer: any CommitObserver) { store.remove(commitObserver: observer) }

    package func recordOwnerAddress(_ address: String, certificate: String?) {
        store.recordOwnerAddress(address, certificate: certificate)
    }

    package func close() { store.close() }

    package var documentsScanned: Int { store.statistics.documentsScanned }

    package func sizeOnDisk() -> Int64 { store.sizeOnDisk() }
}
