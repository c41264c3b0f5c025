import HearthCore
import HearthEngine

/// Each operation as a typed call, for tests that drive the engine without HTTP: every one is `perform`.
extension Database {
    /// `perform(.get)`.
    public func get(_ path: DocumentPath, as identity: Identity, transaction: String? = nil) async throws -> StoredDocument? {
        guard case .document(let doc) = try await perform(.get(path, transaction: transaction), as: identity) else { throw Self.unexpected }
        return doc
    }

    /// `perform(.list)`.
    public func list(_ collection: CollectionPath, pageSize: Int, pageToken: String?, as identity: Identity,
                     transaction: String? = nil) async throws -> ListPage {
        let operation = DatabaseOperation.list(collection, pageSize: pageSize, pageToken: pageToken, transaction: transaction)
        guard case .page(let page) = try await perform(operation, as: identity) else { throw Self.unexpected }
        return page
    }

    /// `perform(.query)`.
    public func runQuery(_ query: Query, as identity: Identity, transaction: String? = nil) async throws -> QueryResult {
        guard case .queried(let result) = try await perform(.query(query, transaction: transaction), as: identity) else {
            throw Self.unexpected
        }
        return result
    }

    /// `perform(.collectionIDs)`.
    public func collectionIDs(under parent: DocumentPath?, as identity: Identity) async throws -> [String] {
        guard case .collectionIDs(let ids) = try await perform(.collectionIDs(under: parent), as: identity) else { throw Self.unexpected }
        return ids
    }

    /// `perform(.documentsBelow)`: the paths read.
    public func documentsBelow(_ prefix: [String], after: DocumentPath? = nil, limit: Int,
                               as identity: Identity) async throws -> [String] {
        guard case .queried(let result) = try await perform(.documentsBelow(prefix: prefix, after: after, limit: limit), as: identity) else {
            throw Self.unexpected
        }
        return result.documents.map(\.path.description)
    }

    /// `perform(.deleteRecursive)`.
    public func deleteRecursive(_ path: DocumentPath, as identity: Identity) async throws -> CommitResult {
        guard case .committed(let result) = try await perform(.deleteRecursive(path), as: identity) else { throw Self.unexpected }
        return result
    }

    /// `perform(.beginTransaction)`.
    public func beginTransaction(as identity: Identity) async throws -> String {
        guard case .transaction(let id) = try await perform(.beginTransaction(address: nil), as: identity) else { throw Self.unexpected }
        return id
    }

    static var unexpected: HearthError { .internal("the operation came to another kind of outcome") }
}
