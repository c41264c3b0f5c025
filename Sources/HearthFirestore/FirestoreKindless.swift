import HearthCore
import HearthEngine
import HearthFirestoreProtos
import SwiftProtobuf

/// Firestore's kindless queries: `all_descendants` with no collection id, every document below the parent, in
/// name order. Firestore's clients send them for a recursive read or delete, bounded by two `__name__` cursors,
/// `{collection}/__id-9223372036854775808__` and `{collection}\0/__id-9223372036854775808__`: the first
/// position of the collection and the first after it, so that the documents read are those below the collection.
/// `__id<n>__` ids sort before every other id in Firestore's order, which is what these cursors rely on.
struct KindlessQuery: Sendable {
    /// The segments every document read starts with.
    var prefix: [String]
    /// Documents at or before this path are skipped (a `start_after` the client pages with).
    var after: DocumentPath?
    /// A `start_at` at a document: documents before it are skipped.
    var atOrAfter: DocumentPath?
    var offset: Int
    var limit: Int?
    /// The fields returned (none: `__name__` only).
    var select: [FieldPath]?

    /// Whether a path read belongs to the query's database: below the `(default)` root are also the named
    /// databases' documents, which it does not hold.
    func holds(_ path: DocumentPath) -> Bool {
        !(prefix.isEmpty && path.segments.first == FirestoreDatabase.namespaceCollection)
    }
}

extension FirestoreDatabase {
    /// The kindless query a structured query is, or nil when it names a collection.
    func kindless(_ proto: Google_Firestore_V1_StructuredQuery, parent: String) throws(HearthError) -> KindlessQuery? {
        guard proto.from.count == 1, proto.from[0].allDescendants, proto.from[0].collectionID.isEmpty else { return nil }
        guard !proto.hasWhere else {
            throw .invalidArgument("Invalid query. A kindless query (all descendants, no collection id) takes no filter")
        }
        for order in proto.orderBy where order.field.fieldPath != "__name__" || order.direction == .descending {
            throw .invalidArgument("Invalid query. A kindless query is ordered by __name__ ascending only")
        }
        var query = KindlessQuery(prefix: try parentDocument(parent)?.segments ?? [], offset: Int(max(proto.offset, 0)))
        if proto.hasLimit { query.limit = Int(max(proto.limit.value, 0)) }
        if proto.hasSelect { query.select = try proto.select.fields.map { f throws(HearthError) in try Self.field(f) }.filter { !$0.isDocumentName } }
        if proto.hasEndAt {
            // `{collection}\0/__id…__`: the end of that collection's documents.
            guard let end = try cursorSegments(proto.endAt), end.count >= 2, end[end.count - 2].hasSuffix("\0"),
                  Self.isMinimumID(end[end.count - 1]) else {
                throw .invalidArgument("Invalid query. A kindless query's end cursor must be the end of a collection")
            }
            var collection = Array(end.dropLast())
            collection[collection.count - 1].removeLast()
            guard collection.starts(with: query.prefix) else {
                throw .invalidArgument("Invalid query. The end cursor is not below the query's parent")
            }
            query.prefix = collection
        }
        if proto.hasStartAt, let start = try cursorSegments(proto.startAt) {
            if Self.isMinimumID(start[start.count - 1]) {
                // The first position of a collection: every document of the prefix is at or after it.
                guard Array(start.dropLast()).starts(with: query.prefix) || query.prefix.starts(with: Array(start.dropLast())) else {
                    throw .invalidArgument("Invalid query. The start cursor is not below the query's parent")
                }
            } else if proto.startAt.before {
                query.atOrAfter = DocumentPath(uncheckedSegments: start)
            } else {
                query.after = DocumentPath(uncheckedSegments: start)
            }
        }
        return query
    }

    /// The document path a `__name__` cursor holds, its ids unchecked (the cursors above use reserved ids).
    func cursorSegments(_ cursor: Google_Firestore_V1_Cursor) throws(HearthError) -> [String]? {
        guard cursor.values.count == 1, case .referenceValue(let name)? = cursor.values[0].valueType else {
            throw .invalidArgument("Invalid query. A kindless query's cursor holds one document reference")
        }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 7, parts.count % 2 == 1, parts[0] == "projects", parts[2] == "databases", parts[4] == "documents" else {
            throw .invalidArgument("Invalid query. '\(name.prefix(200))' is not a document reference")
        }
        let database = try FirestoreDatabase(project: parts[1], database: parts[3])
        return database.prefix + parts.dropFirst(5)
    }

    /// `__id<n>__`: Firestore's numeric ids, which sort before every string id.
    static func isMinimumID(_ id: String) -> Bool {
        id.hasPrefix("__id") && id.hasSuffix("__") && Int64(id.dropFirst(4).dropLast(2)) != nil
    }
}

extension FirestoreService {
    /// Runs a kindless query: pages of `Database.perform(.documentsBelow)` until the limit.
    func run(_ query: KindlessQuery, _ caller: FirestoreCaller) async throws -> (documents: [StoredDocument], readTime: Timestamp) {
        let wanted = query.limit.map { $0 + query.offset } ?? Int.max
        var documents: [StoredDocument] = []
        var after = query.after
        var readTime = Timestamp.now()
        while documents.count < wanted {
            let page = min(wanted - documents.count, Limits.maxPageSize)
            guard case .queried(let result) = try await perform(.documentsBelow(prefix: query.prefix, after: after, limit: page),
                                                                caller) else {
                preconditionFailure("reading documents comes to documents")
            }
            readTime = result.readTime
            for doc in result.documents where query.holds(doc.path) && query.atOrAfter.map({ doc.path.compare($0) >= 0 }) ?? true {
                documents.append(doc)
            }
            guard result.documents.count == page, let last = result.documents.last else { break }
            after = last.path
        }
        documents = Array(documents.dropFirst(query.offset).prefix(query.limit ?? Int.max))
        if let select = query.select {
            documents = try documents.map { stored in
                let doc = try stored.decoded()
                return StoredDocument(Document(path: doc.path, fields: FirestoreDatabase.masked(doc.fields, select),
                                               createTime: doc.createTime, updateTime: doc.updateTime))
            }
        }
        return (documents, readTime)
    }
}
