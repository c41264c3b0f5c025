import HearthCore
import HearthEngine
import HearthStore
import Hummingbird

/// The document API (docs/api.md): documents, collections, commits, transactions and subcollection ids.
struct DocumentRoutes {
    let database: Database
    /// How documents created without an id are named.
    let autoIDs: AutoIDs
    /// Where a request comes from: open transactions are bounded per address too.
    let clientAddress: ClientAddress

    func register(on router: Router<HearthRequestContext>) {
        router.get("/v1/docs/**") { request, context in try await self.get(request, context) }
        router.post("/v1/docs/**") { request, context in try await self.create(request, context) }
        router.put("/v1/docs/**") { request, context in try await self.set(request, context) }
        router.patch("/v1/docs/**") { request, context in try await self.update(request, context) }
        router.delete("/v1/docs/**") { request, context in try await self.delete(request, context) }
        router.post("/v1/commit") { request, context in try await self.commit(request, context) }
        router.post("/v1/transactions") { request, context in try await self.begin(request, context) }
        router.post("/v1/transactions/:id/rollback") { request, context in try await self.rollback(request, context) }
        router.get("/v1/collections") { request, context in try await self.collections(request, context, under: nil) }
        router.get("/v1/collections/**") { request, context in
            try await self.collections(request, context, under: try Self.documentPath(request, prefix: "/v1/collections/"))
        }
    }

    /// A document or collection path from the URL, percent-decoded segment by segment.
    enum Target {
        case document(DocumentPath)
        case collection(CollectionPath)
    }

    static func target(_ request: Request) throws(HearthError) -> Target {
        guard let raw = request.rawPath(after: "/v1/docs/"), !raw.isEmpty else {
            throw .invalidArgument("missing document or collection path after /v1/docs/")
        }
        let segments = try parsePathSegments(String(raw), percentDecoded: true)
        return segments.count % 2 == 0 ? .document(DocumentPath(uncheckedSegments: segments))
            : .collection(CollectionPath(uncheckedSegments: segments))
    }

    static func documentPath(_ request: Request, prefix: String) throws(HearthError) -> DocumentPath {
        guard let raw = request.rawPath(after: prefix), !raw.isEmpty else { throw .invalidArgument("missing document path") }
        return try DocumentPath(String(raw), percentDecoded: true)
    }

    static func requireDocument(_ target: Target, _ method: String) throws(HearthError) -> DocumentPath {
        switch target {
        case .document(let path): return path
        case .collection(let path):
            throw .invalidArgument("\(method) needs a document path; '\(path)' is a collection (it has an odd number of segments)")
        }
    }

    // MARK: Handlers

    func get(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        switch try Self.target(request) {
        case .document(let path):
            let params = try QueryParameters(request, allowed: ["transaction"])
            guard let doc = try await database.get(path, as: context.identity, transaction: params["transaction"]) else {
                throw HearthError.notFound("no document at \(path)")
            }
            return documentResponse(doc)
        case .collection(let path):
            let params = try QueryParameters(request, allowed: ["pageSize", "pageToken", "transaction"])
            let size = try params.int("pageSize", range: 1...Limits.maxPageSize, default: Limits.defaultPageSize)
            let page = try await database.list(path, pageSize: size, pageToken: params["pageToken"], as: context.identity,
                                               transaction: params["transaction"])
            var w = JSONWriter(capacity: 256 * page.documents.count + 64)
            writeDocumentsArray(page.documents, to: &w)
            if let token = page.nextPageToken {
                w.raw(",\"nextPageToken\":")
                w.string(token)
            }
            w.raw("}")
            return jsonResponse(w.bytes)
        }
    }

    func create(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        guard case .collection(let collection) = try Self.target(request) else {
            throw HearthError.invalidArgument("POST creates a document in a collection; use PUT to write a document at a path")
        }
        let params = try QueryParameters(request, allowed: ["id"])
        var request = request
        let body = try await request.jsonBody(context: context)
        let path = try collection.document(params["id"] ?? autoIDs.make())
        let result = try await database.commit(CommitRequest(writes: [Self.createWrite(path, body)]), as: context.identity)
        return documentResponse(result.writeResults[0].document!, status: .created)
    }

    func set(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        let path = try Self.requireDocument(Self.target(request), "PUT")
        let params = try QueryParameters(request, allowed: ["merge"])
        var request = request
        let body = try await request.jsonBody(context: context)
        let precondition = try Self.precondition(request)
        let write = try Self.setWrite(path, body, merge: params.bool("merge"), precondition: precondition)
        let result = try await database.commit(CommitRequest(writes: [write]), as: context.identity)
        return documentResponse(result.writeResults[0].document!)
    }

    func update(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        let path = try Self.requireDocument(Self.target(request), "PATCH")
        _ = try QueryParameters(request, allowed: [])
        var request = request
        let body = try await request.jsonBody(context: context)
        let precondition = try Self.precondition(request)
        if precondition == .exists(false) { throw HearthError.invalidArgument("If-None-Match: * cannot apply to an update") }
        let result = try await database.commit(CommitRequest(writes: [Self.updateWrite(path, body, precondition: precondition)]),
                                               as: context.identity)
        return documentResponse(result.writeResults[0].document!)
    }

    func delete(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        let path = try Self.requireDocument(Self.target(request), "DELETE")
        let params = try QueryParameters(request, allowed: ["recursive"])
        let precondition = try Self.precondition(request)
        if try params.bool("recursive") {
            if precondition != nil { throw HearthError.invalidArgument("a recursive delete takes no precondition") }
            _ = try await database.deleteRecursive(path, as: context.identity)
        } else {
            if precondition == .exists(false) { throw HearthError.invalidArgument("If-None-Match: * cannot apply to a delete") }
            _ = try await database.commit(CommitRequest(writes: [Write(kind: .delete, path: path, precondition: precondition)]),
                                          as: context.identity)
        }
        return Response(status: .noContent)
    }

    func commit(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        _ = try QueryParameters(request, allowed: [])
        var request = request
        let commit = try CommitRequest(json: try await request.jsonBody(context: context))
        let result = try await database.commit(commit, as: context.identity)
        var w = JSONWriter()
        w.raw("{\"writeResults\":[")
        for (i, r) in result.writeResults.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{")
            if let t = r.updateTime { w.raw("\"updateTime\":\"\(t.rfc3339)\"") }
            if !r.transformResults.isEmpty {
                if r.updateTime != nil { w.raw(",") }
                w.raw("\"transformResults\":")
                Value.array(r.transformResults).write(to: &w)
            }
            w.raw("}")
        }
        w.raw("],\"commitTime\":\"\(result.commitTime.rfc3339)\"}")
        return jsonResponse(w.bytes)
    }

    func begin(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        _ = try QueryParameters(request, allowed: [])
        var request = request
        let body = try await request.jsonBody(context: context)
        guard case .object(let pairs) = body, pairs.isEmpty else {
            throw HearthError.invalidArgument("POST /v1/transactions takes an empty body or {}")
        }
        let id = try database.beginTransaction(as: context.identity, from: clientAddress(request, context))
        var w = JSONWriter()
        w.raw("{\"transaction\":")
        w.string(id)
        w.raw("}")
        return jsonResponse(w.bytes, status: .created)
    }

    func rollback(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        _ = try QueryParameters(request, allowed: [])
        let id = try context.parameters.require("id")
        try database.rollback(id, as: context.identity)
        return Response(status: .noContent)
    }

    func collections(_ request: Request, _ context: HearthRequestContext, under parent: DocumentPath?) async throws -> Response {
        _ = try QueryParameters(request, allowed: [])
        let ids = try await database.collectionIDs(under: parent, as: context.identity)
        return jsonResponse(JSON.object([("collectionIds", .array(ids.map { .string($0) }))]).serialized())
    }

    // MARK: Helpers

    /// The write `POST /v1/docs/{collection}` makes of its body (also answered by `InlineAnswers`).
    static func createWrite(_ path: DocumentPath, _ body: JSON) throws(HearthError) -> Write {
        try Write(kind: "create", path: path, data: body)
    }

    /// The write `PUT /v1/docs/{document}` makes of its body (also answered by `InlineAnswers`, without merge
    /// or precondition).
    static func setWrite(_ path: DocumentPath, _ body: JSON, merge: Bool = false,
                         precondition: Precondition? = nil) throws(HearthError) -> Write {
        try Write(kind: precondition == .exists(false) ? "create" : "set", path: path, data: body, merge: .bool(merge),
                  precondition: precondition)
    }

    /// The write `PATCH /v1/docs/{document}` makes of its body (also answered by `InlineAnswers`, without
    /// precondition).
    static func updateWrite(_ path: DocumentPath, _ body: JSON, precondition: Precondition? = nil) throws(HearthError) -> Write {
        try Write(kind: "update", path: path, data: body, precondition: precondition)
    }

    /// `If-Match: "<updateTime>"` → the document must have that version; `If-None-Match: *` → it must not exist.
    static func precondition(_ request: Request) throws(HearthError) -> Precondition? {
        if let match = request.headers[.ifMatch] {
            var text = Substring(match.trimmingCharacters(in: .whitespaces))
            if text.hasPrefix("W/") { throw .invalidArgument("If-Match takes a strong ETag, not a weak one") }
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
            guard let t = Timestamp(rfc3339: String(text)) else {
                throw .invalidArgument("If-Match must hold a document's updateTime as an ETag, e.g. \"2026-11-22T10:00:00.000000Z\"")
            }
            return .updateTime(t)
        }
        if let noneMatch = request.headers[.ifNoneMatch] {
            guard noneMatch.trimmingCharacters(in: .whitespaces) == "*" else {
                throw .invalidArgument("If-None-Match supports only * (create only)")
            }
            return .exists(false)
        }
        return nil
    }

    func documentResponse(_ doc: StoredDocument, status: HTTPResponse.Status = .ok) -> Response {
        documentReply(doc, status: status).response
    }
}
