import Foundation
import GRPCCore
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import Logging
import SwiftProtobuf
import Synchronization

/// `google.firestore.v1.Firestore` over the engine: every RPC builds `DatabaseOperation`s and hands them to
/// `Database.perform`, as the HTTP API does, so documents, rules and transactions are the same on both faces.
/// Listen is in `FirestoreService+Listen.swift`; RPCs Hearth does not serve answer UNIMPLEMENTED.
struct FirestoreService: Google_Firestore_V1_Firestore.ServiceProtocol {
    let database: Database
    let feed: ChangeFeed
    let authenticate: FirestoreAuthenticate
    let autoIDs: AutoIDs
    let logger: Logger

    // MARK: Plumbing

    func caller(_ metadata: Metadata) throws -> FirestoreCaller {
        try authenticate(metadata[stringValues: "authorization"].first(where: { _ in true }))
    }

    /// Runs a unary RPC's body with its caller, answering errors as gRPC statuses.
    func unary<Output: Sendable>(_ metadata: Metadata, _ body: (FirestoreCaller) async throws -> Output) async throws -> ServerResponse<Output> {
        do {
            return ServerResponse(message: try await body(caller(metadata)))
        } catch {
            throw FirestoreStatus.rpcError(error, logger: logger)
        }
    }

    /// Runs a server-streaming RPC's body with its caller; the caller is decided before the stream opens.
    func streaming<Output: Sendable>(_ metadata: Metadata,
                                     _ body: @escaping @Sendable (FirestoreCaller, RPCWriter<Output>) async throws -> Void)
        throws -> StreamingServerResponse<Output> {
        let caller: FirestoreCaller
        do { caller = try self.caller(metadata) } catch { throw FirestoreStatus.rpcError(error, logger: logger) }
        return StreamingServerResponse { [logger] writer in
            do { try await body(caller, writer) } catch { throw FirestoreStatus.rpcError(error, logger: logger) }
            return [:]
        }
    }

    func perform(_ operation: DatabaseOperation, _ caller: FirestoreCaller) async throws -> Outcome {
        try await database.perform(operation, as: caller.identity)
    }

    /// A transaction id as Firestore carries it (bytes) and as Hearth issues it (text).
    static func transactionID(_ bytes: Data) throws(HearthError) -> String {
        guard let id = String(bytes: bytes, encoding: .utf8), !id.isEmpty else {
            throw .invalidArgument("the transaction id was not issued by this server")
        }
        return id
    }

    static func transactionBytes(_ id: String) -> Data { Data(id.utf8) }

    static func refuseReadTime() -> HearthError {
        .invalidArgument("read_time (reading at a past time) is not served by Hearth; read without it or in a transaction")
    }

    /// `readTransaction(_:_:peer:completion:)` for the RPCs that run in tasks.
    func readTransaction(_ consistency: ReadConsistency, _ caller: FirestoreCaller,
                         peer: String) async throws -> (id: String?, begun: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            readTransaction(consistency, caller, peer: peer) { continuation.resume(with: $0) }
        }
    }

    // MARK: Documents

    func getDocument(request: ServerRequest<Google_Firestore_V1_GetDocumentRequest>,
                     context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_Document> {
        try await unary(request.metadata) { caller in
            let message = request.message
            let db = try FirestoreDatabase.of(message.name)
            let path = try db.documentPath(message.name)
            var transaction: String?
            switch message.consistencySelector {
            case .transaction(let bytes)?: transaction = try Self.transactionID(bytes)
            case .readTime?: throw Self.refuseReadTime()
            case nil: break
            }
            let mask = try message.hasMask ? FirestoreDatabase.mask(message.mask) : nil
            guard case .document(let stored) = try await perform(.get(path, transaction: transaction), caller) else {
                preconditionFailure("a get comes to a document")
            }
            guard let stored else { throw HearthError.notFound("Document \"\(message.name)\" not found.") }
            return try db.proto(stored, mask: mask)
        }
    }

    func batchGetDocuments(request: ServerRequest<Google_Firestore_V1_BatchGetDocumentsRequest>,
                           context: ServerContext) async throws -> StreamingServerResponse<Google_Firestore_V1_BatchGetDocumentsResponse> {
        let message = request.message
        return try streaming(request.metadata) { caller, writer in
            let responses = ResponseList<Google_Firestore_V1_BatchGetDocumentsResponse>()
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                batchGet(message, caller, peer: context.remotePeer, send: responses.append) { continuation.resume(with: $0) }
            }
            try await writer.write(contentsOf: responses.taken())
        }
    }

    func listDocuments(request: ServerRequest<Google_Firestore_V1_ListDocumentsRequest>,
                       context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_ListDocumentsResponse> {
        try await unary(request.metadata) { caller in
            let message = request.message
            let db = try FirestoreDatabase.of(message.parent)
            let parent = try db.parentDocument(message.parent)
            guard !message.collectionID.isEmpty else {
                throw HearthError.invalidArgument("ListDocuments needs a collection_id")
            }
            try validateID(message.collectionID, kind: "collection id")
            if !message.orderBy.isEmpty && message.orderBy != "__name__" {
                throw HearthError.invalidArgument("ListDocuments orders only by __name__")
            }
            let collection = CollectionPath(uncheckedSegments: (parent?.segments ?? []) + [message.collectionID])
            var transaction: String?
            switch message.consistencySelector {
            case .transaction(let bytes)?: transaction = try Self.transactionID(bytes)
            case .readTime?: throw Self.refuseReadTime()
            case nil: break
            }
            guard message.pageSize >= 0 else { throw HearthError.invalidArgument("page_size must not be negative") }
            let pageSize = message.pageSize == 0 ? Limits.maxPageSize : min(Int(message.pageSize), Limits.maxPageSize)
            let mask = try message.hasMask ? FirestoreDatabase.mask(message.mask) : nil
            let token = message.pageToken.isEmpty ? nil : message.pageToken
            if message.showMissing {
                if transaction != nil { throw HearthError.invalidArgument("show_missing cannot be asked in a transaction") }
                return try await listWithMissing(collection, pageSize: pageSize, after: token, db: db, mask: mask, caller)
            }
            guard case .page(let page) = try await perform(.list(collection, pageSize: pageSize, pageToken: token,
                                                                 transaction: transaction), caller) else {
                preconditionFailure("a listing comes to a page")
            }
            var response = Google_Firestore_V1_ListDocumentsResponse()
            response.documents = try page.documents.map { try db.proto($0, mask: mask) }
            response.nextPageToken = page.nextPageToken ?? ""
            return response
        }
    }

    /// A listing with `show_missing`: the collection's documents and, as names only, the missing documents that
    /// have documents below them, in id order; the page token is the last id of the page before.
    func listWithMissing(_ collection: CollectionPath, pageSize: Int, after: String?, db: FirestoreDatabase,
                         mask: [FieldPath]?, _ caller: FirestoreCaller) async throws -> Google_Firestore_V1_ListDocumentsResponse {
        var present: [String: StoredDocument] = [:]
        var ids = Set<String>()
        var cursor: DocumentPath?
        let depth = collection.segments.count
        while true {
            guard case .queried(let result) = try await perform(
                .documentsBelow(prefix: collection.segments, after: cursor, limit: Limits.maxPageSize), caller) else {
                preconditionFailure("reading documents comes to documents")
            }
            for doc in result.documents {
                let id = doc.path.segments[depth]
                ids.insert(id)
                if doc.path.segments.count == depth + 1 { present[id] = doc }
            }
            guard result.documents.count == Limits.maxPageSize, let last = result.documents.last else { break }
            cursor = last.path
        }
        var ordered = ids.sorted { compareUTF8($0, $1) < 0 }
        if let after { ordered = ordered.filter { compareUTF8($0, after) > 0 } }
        var response = Google_Firestore_V1_ListDocumentsResponse()
        for id in ordered.prefix(pageSize) {
            if let stored = present[id] {
                response.documents.append(try db.proto(stored, mask: mask))
            } else {
                response.documents.append(.with { $0.name = db.name(of: DocumentPath(uncheckedSegments: collection.segments + [id])) })
            }
        }
        if ordered.count > pageSize, let last = ordered.prefix(pageSize).last { response.nextPageToken = last }
        return response
    }

    func createDocument(request: ServerRequest<Google_Firestore_V1_CreateDocumentRequest>,
                        context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_Document> {
        try await unary(request.metadata) { caller in
            let message = request.message
            let db = try FirestoreDatabase.of(message.parent)
            let parent = try db.parentDocument(message.parent)
            try validateID(message.collectionID, kind: "collection id")
            let collection = CollectionPath(uncheckedSegments: (parent?.segments ?? []) + [message.collectionID])
            let path = try collection.document(message.documentID.isEmpty ? autoIDs.make() : message.documentID)
            let fields = try db.fields(message.document.fields)
            let write = Write(kind: .create, path: path, fields: fields, precondition: .exists(false))
            let result = try await commit([write], transaction: nil, caller)
            let mask = try message.hasMask ? FirestoreDatabase.mask(message.mask) : nil
            return try written(result, db: db, mask: mask)
        }
    }

    func updateDocument(request: ServerRequest<Google_Firestore_V1_UpdateDocumentRequest>,
                        context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_Document> {
        try await unary(request.metadata) { caller in
            let message = request.message
            let db = try FirestoreDatabase.of(message.document.name)
            var proto = Google_Firestore_V1_Write()
            proto.update = message.document
            if message.hasUpdateMask { proto.updateMask = message.updateMask }
            if message.hasCurrentDocument { proto.currentDocument = message.currentDocument }
            let result = try await commit([db.write(proto)], transaction: nil, caller)
            let mask = try message.hasMask ? FirestoreDatabase.mask(message.mask) : nil
            return try written(result, db: db, mask: mask)
        }
    }

    func deleteDocument(request: ServerRequest<Google_Firestore_V1_DeleteDocumentRequest>,
                        context: ServerContext) async throws -> ServerResponse<Google_Protobuf_Empty> {
        try await unary(request.metadata) { caller in
            let message = request.message
            let db = try FirestoreDatabase.of(message.name)
            let precondition = try message.hasCurrentDocument ? db.precondition(message.currentDocument) : nil
            _ = try await commit([Write(kind: .delete, path: db.documentPath(message.name), precondition: precondition)],
                                 transaction: nil, caller)
            return Google_Protobuf_Empty()
        }
    }

    /// The document a single-write commit left.
    func written(_ result: CommitResult, db: FirestoreDatabase, mask: [FieldPath]?) throws -> Google_Firestore_V1_Document {
        guard let stored = result.writeResults.first?.document else {
            throw HearthError.internal()
        }
        return try db.proto(stored, mask: mask)
    }

    // MARK: Writes and transactions

    func commit(_ writes: [Write], transaction: String?, _ caller: FirestoreCaller) async throws -> CommitResult {
        guard case .committed(let result) = try await perform(.commit(CommitRequest(writes: writes, transaction: transaction)), caller) else {
            preconditionFailure("a commit comes to its results")
        }
        return result
    }

    static func checkWriteCount(_ count: Int) throws(HearthError) {
        if count > Limits.maxWritesPerCommit {
            throw .invalidArgument("A write batch holds at most \(Limits.maxWritesPerCommit) writes; this one has \(count)")
        }
    }

    func commit(request: ServerRequest<Google_Firestore_V1_CommitRequest>,
                context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_CommitResponse> {
        try await unary(request.metadata) { caller in
            try await withCheckedThrowingContinuation { continuation in
                commit(request.message, caller) { continuation.resume(with: $0) }
            }
        }
    }

    func batchWrite(request: ServerRequest<Google_Firestore_V1_BatchWriteRequest>,
                    context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_BatchWriteResponse> {
        try await unary(request.metadata) { caller in
            let message = request.message
            let db = try FirestoreDatabase(name: message.database)
            try Self.checkWriteCount(message.writes.count)
            let writes = try message.writes.enumerated().map { k, w in try db.write(w, at: "writes[\(k)]") }
            var response = Google_Firestore_V1_BatchWriteResponse()
            // Not atomic: each write commits on its own, and fails on its own.
            for write in writes {
                var status = Google_Rpc_Status()
                var writeResult = Google_Firestore_V1_WriteResult()
                do {
                    let result = try await commit([write], transaction: nil, caller)
                    writeResult = db.proto(result).results[0]
                } catch {
                    let rpc = FirestoreStatus.rpcError(error, logger: logger)
                    status.code = Int32(rpc.code.rawValue)
                    status.message = rpc.message
                }
                response.writeResults.append(writeResult)
                response.status.append(status)
            }
            return response
        }
    }

    func beginTransaction(request: ServerRequest<Google_Firestore_V1_BeginTransactionRequest>,
                          context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_BeginTransactionResponse> {
        try await unary(request.metadata) { caller in
            _ = try FirestoreDatabase(name: request.message.database)
            guard case .transaction(let id) = try await perform(.beginTransaction(address: context.remotePeer), caller) else {
                preconditionFailure("beginning a transaction comes to its id")
            }
            var response = Google_Firestore_V1_BeginTransactionResponse()
            response.transaction = Self.transactionBytes(id)
            return response
        }
    }

    func rollback(request: ServerRequest<Google_Firestore_V1_RollbackRequest>,
                  context: ServerContext) async throws -> ServerResponse<Google_Protobuf_Empty> {
        try await unary(request.metadata) { caller in
            _ = try FirestoreDatabase(name: request.message.database)
            _ = try await perform(.rollback(Self.transactionID(request.message.transaction)), caller)
            return Google_Protobuf_Empty()
        }
    }

    // MARK: Queries

    func runQuery(request: ServerRequest<Google_Firestore_V1_RunQueryRequest>,
                  context: ServerContext) async throws -> StreamingServerResponse<Google_Firestore_V1_RunQueryResponse> {
        let message = request.message
        return try streaming(request.metadata) { caller, writer in
            let db = try FirestoreDatabase.of(message.parent)
            guard case .structuredQuery(let structured)? = message.queryType else {
                throw HearthError.invalidArgument("RunQuery needs a structured_query")
            }
            try Self.checkServed(structured, explain: message.hasExplainOptions)
            let kindless = try db.kindless(structured, parent: message.parent)
            let query = kindless == nil ? try db.query(structured, parent: message.parent) : nil
            let (transaction, begun) = try await readTransaction(ReadConsistency(message.consistencySelector), caller,
                                                                 peer: context.remotePeer)
            let result: (documents: [StoredDocument], readTime: Timestamp)
            if let kindless {
                if transaction != nil { throw HearthError.invalidArgument("a kindless query cannot run in a transaction") }
                result = try await run(kindless, caller)
            } else if let query, case .queried(let queried) = try await perform(.query(query, transaction: transaction), caller) {
                result = (queried.documents, queried.readTime)
            } else {
                preconditionFailure("a query comes to documents")
            }
            let readTimeProto = FirestoreDatabase.proto(result.readTime)
            var first = true
            for stored in result.documents {
                var response = Google_Firestore_V1_RunQueryResponse()
                response.document = try db.proto(stored)
                response.readTime = readTimeProto
                if first, begun, let transaction { response.transaction = Self.transactionBytes(transaction) }
                first = false
                try await writer.write(response)
            }
            // Firestore ends a query with a response holding its read time (and no document) when nothing matched.
            if first {
                var response = Google_Firestore_V1_RunQueryResponse()
                response.readTime = readTimeProto
                if begun, let transaction { response.transaction = Self.transactionBytes(transaction) }
                try await writer.write(response)
            }
        }
    }

    func runAggregationQuery(request: ServerRequest<Google_Firestore_V1_RunAggregationQueryRequest>,
                             context: ServerContext) async throws -> StreamingServerResponse<Google_Firestore_V1_RunAggregationQueryResponse> {
        let message = request.message
        return try streaming(request.metadata) { caller, writer in
            let db = try FirestoreDatabase.of(message.parent)
            guard case .structuredAggregationQuery(let structured)? = message.queryType else {
                throw HearthError.invalidArgument("RunAggregationQuery needs a structured_aggregation_query")
            }
            try Self.checkServed(structured.structuredQuery, explain: message.hasExplainOptions)
            let aggregate = try db.aggregate(structured, parent: message.parent)
            let (transaction, begun) = try await readTransaction(ReadConsistency(message.consistencySelector), caller,
                                                                 peer: context.remotePeer)
            guard case .aggregated(let result) = try await perform(.aggregate(aggregate, transaction: transaction), caller) else {
                preconditionFailure("an aggregation comes to values")
            }
            var response = Google_Firestore_V1_RunAggregationQueryResponse()
            response.result.aggregateFields = result.values.mapValues(db.proto)
            response.readTime = FirestoreDatabase.proto(result.readTime)
            if begun, let transaction { response.transaction = Self.transactionBytes(transaction) }
            try await writer.write(response)
        }
    }

    /// Refuses, as UNIMPLEMENTED, what a query may ask that Hearth does not do.
    static func checkServed(_ query: Google_Firestore_V1_StructuredQuery, explain: Bool) throws {
        if query.hasFindNearest { throw FirestoreStatus.unimplemented("Vector search (find_nearest)") }
        if explain { throw FirestoreStatus.unimplemented("Query explain (explain_options)") }
    }

    func listCollectionIds(request: ServerRequest<Google_Firestore_V1_ListCollectionIdsRequest>,
                           context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_ListCollectionIdsResponse> {
        try await unary(request.metadata) { caller in
            let message = request.message
            let db = try FirestoreDatabase.of(message.parent)
            let parent = try db.parentDocument(message.parent)
            if case .readTime? = message.consistencySelector { throw Self.refuseReadTime() }
            guard message.pageSize >= 0 else { throw HearthError.invalidArgument("page_size must not be negative") }
            guard case .collectionIDs(let ids) = try await perform(.collectionIDs(under: parent), caller) else {
                preconditionFailure("listing collection ids comes to ids")
            }
            // Pages by id: the token is the last id of the page before.
            let after = message.pageToken
            // The named databases' collection is no collection of the (default) database.
            let visible = parent == nil ? ids.filter { $0 != FirestoreDatabase.namespaceCollection } : ids
            var remaining = visible.sorted(by: { compareUTF8($0, $1) < 0 }).filter { after.isEmpty || compareUTF8($0, after) > 0 }
            var response = Google_Firestore_V1_ListCollectionIdsResponse()
            if message.pageSize > 0, remaining.count > Int(message.pageSize) {
                remaining = Array(remaining.prefix(Int(message.pageSize)))
                response.nextPageToken = remaining.last ?? ""
            }
            response.collectionIds = remaining
            return response
        }
    }

    // MARK: Not served

    func partitionQuery(request: ServerRequest<Google_Firestore_V1_PartitionQueryRequest>,
                        context: ServerContext) async throws -> ServerResponse<Google_Firestore_V1_PartitionQueryResponse> {
        throw FirestoreStatus.unimplemented("PartitionQuery")
    }

    func write(request: StreamingServerRequest<Google_Firestore_V1_WriteRequest>,
               context: ServerContext) async throws -> StreamingServerResponse<Google_Firestore_V1_WriteResponse> {
        throw FirestoreStatus.unimplemented("The Write stream")
    }

    func executePipeline(request: ServerRequest<Google_Firestore_V1_ExecutePipelineRequest>,
                         context: ServerContext) async throws -> StreamingServerResponse<Google_Firestore_V1_ExecutePipelineResponse> {
        throw FirestoreStatus.unimplemented("ExecutePipeline (pipelines)")
    }
}

/// Responses a completion-based RPC sends, gathered for a task to write.
final class ResponseList<Response: Sendable>: Sendable {
    private let list = Mutex<[Response]>([])
    func append(_ response: Response) { list.withLock { $0.append(response) } }
    func taken() -> [Response] { list.withLock { $0 } }
}

/// How a read chooses what it sees: the current state, a transaction's, one begun for it, or a past time. Each
/// request type has its own `consistency_selector`; they share these cases.
enum ReadConsistency {
    case current
    case transaction(Data)
    case newTransaction
    case readTime

    init(_ selector: Google_Firestore_V1_BatchGetDocumentsRequest.OneOf_ConsistencySelector?) {
        switch selector {
        case nil: self = .current
        case .transaction(let bytes)?: self = .transaction(bytes)
        case .newTransaction?: self = .newTransaction
        case .readTime?: self = .readTime
        }
    }

    init(_ selector: Google_Firestore_V1_RunQueryRequest.OneOf_ConsistencySelector?) {
        switch selector {
        case nil: self = .current
        case .transaction(let bytes)?: self = .transaction(bytes)
        case .newTransaction?: self = .newTransaction
        case .readTime?: self = .readTime
        }
    }

    init(_ selector: Google_Firestore_V1_RunAggregationQueryRequest.OneOf_ConsistencySelector?) {
        switch selector {
        case nil: self = .current
        case .transaction(let bytes)?: self = .transaction(bytes)
        case .newTransaction?: self = .newTransaction
        case .readTime?: self = .readTime
        }
    }
}
