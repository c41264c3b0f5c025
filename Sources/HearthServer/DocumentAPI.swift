import HearthCore
import HearthEngine
import Hummingbird
import HummingbirdCore
import Foundation

/// The document API over HTTP (docs/api.md): how a request becomes a `DatabaseOperation`, and an `Outcome` its
/// answer. Both ways in use it, the router's routes and the event loop's `InlineAnswerHandler`, so they
/// cannot differ in what a request means.
struct DocumentAPI: Sendable {
    /// How documents created without an id are named.
    let autoIDs: AutoIDs

    /// A request as understood: the operation, and the form its answer takes.
    struct Call: Sendable {
        let operation: DatabaseOperation
        let answer: Answer
    }

    /// The form of an answer: which outcome it carries, with which status.
    enum Answer: Sendable {
        case document(HTTPResponse.Status)
        case noContent
        case page
        case writeResults
        case queryResult
        case aggregateResult
        case transaction
        case collectionIDs
    }

    /// The routes it serves, as the router names them (and `/metrics` counts them).
    static let routes: [(HTTPRequest.Method, String)] = [
        (.get, "/v1/docs/**"), (.post, "/v1/docs/**"), (.put, "/v1/docs/**"), (.patch, "/v1/docs/**"), (.delete, "/v1/docs/**"),
        (.post, "/v1/commit"), (.post, "/v1/query"), (.post, "/v1/aggregate"),
        (.post, "/v1/transactions"), (.post, "/v1/transactions/:id/rollback"),
        (.get, "/v1/collections"), (.get, "/v1/collections/**"),
    ]

    static let documents = "/v1/docs/"
    static let collections = "/v1/collections"
    static let transactions = "/v1/transactions"

    /// Whether a request names one of the routes: the path alone decides (the method is checked by `call`).
    static func serves(_ path: Substring) -> Bool {
        path.hasPrefix(documents) || path == "/v1/commit" || path == "/v1/query" || path == "/v1/aggregate"
            || path == transactions || path.hasPrefix(transactions + "/") || path == collections || path.hasPrefix(collections + "/")
    }

    /// The route a request is counted under in `/metrics` (the router's name for it).
    static func route(of path: Substring) -> String {
        if path.hasPrefix(documents) { return "/v1/docs/**" }
        if path.hasPrefix(transactions + "/") { return "/v1/transactions/:id/rollback" }
        if path.hasPrefix(collections + "/") { return "/v1/collections/**" }
        return String(path)
    }

    /// Understands a request: its method, target (path and query string), headers and JSON body (nil for
    /// methods whose body is ignored: `GET`, `DELETE`). `address` is where it came from.
    func call(_ method: HTTPRequest.Method, _ uri: URI, headers: HTTPFields, body: JSON?,
              address: String?) throws(HearthError) -> Call {
        let path = Substring(uri.path)
        if path.hasPrefix(Self.documents) {
            return try documentCall(method, path.dropFirst(Self.documents.count), uri, headers, body)
        }
        switch (method, path) {
        case (.post, "/v1/commit"):
            _ = try QueryParameters(uri, allowed: [])
            return Call(operation: .commit(try CommitRequest(json: body ?? .object([]))), answer: .writeResults)
        case (.post, "/v1/query"):
            let (query, transaction) = try Self.splitTransaction(body, QueryParameters(uri, allowed: ["transaction"]))
            return Call(operation: .query(try Query(json: query), transaction: transaction), answer: .queryResult)
        case (.post, "/v1/aggregate"):
            let (aggregate, transaction) = try Self.splitTransaction(body, QueryParameters(uri, allowed: ["transaction"]))
            return Call(operation: .aggregate(try AggregateQuery(json: aggregate), transaction: transaction),
                        answer: .aggregateResult)
        case (.post, Substring(Self.transactions)):
            _ = try QueryParameters(uri, allowed: [])
            guard case .object(let pairs) = body ?? .object([]), pairs.isEmpty else {
                throw .invalidArgument("POST /v1/transactions takes an empty body or {}")
            }
            return Call(operation: .beginTransaction(address: address), answer: .transaction)
        case (.post, _) where path.hasPrefix(Self.transactions + "/") && path.hasSuffix("/rollback"):
            _ = try QueryParameters(uri, allowed: [])
            let id = path.dropFirst(Self.transactions.count + 1).dropLast("/rollback".count)
            guard !id.isEmpty, !id.contains("/") else { throw .notFound("no route for \(method) \(path)") }
            return Call(operation: .rollback(String(id)), answer: .noContent)
        case (.get, Substring(Self.collections)):
            _ = try QueryParameters(uri, allowed: [])
            return Call(operation: .collectionIDs(under: nil), answer: .collectionIDs)
        case (.get, _) where path.hasPrefix(Self.collections + "/"):
            _ = try QueryParameters(uri, allowed: [])
            let raw = path.dropFirst(Self.collections.count + 1)
            guard !raw.isEmpty else { throw .invalidArgument("missing document path") }
            return Call(operation: .collectionIDs(under: try DocumentPath(String(raw), percentDecoded: true)), answer: .collectionIDs)
        default:
            throw .notFound("no route for \(method) \(path)")
        }
    }

    /// `/v1/docs/{path}`: a document or a collection by the number of segments.
    func documentCall(_ method: HTTPRequest.Method, _ raw: Substring, _ uri: URI, _ headers: HTTPFields,
                      _ body: JSON?) throws(HearthError) -> Call {
        guard !raw.isEmpty else { throw .invalidArgument("missing document or collection path after /v1/docs/") }
        return try documentCall(method, segments: parsePathSegments(String(raw), percentDecoded: true), uri, headers, body)
    }

    /// `/v1/docs/{path}` with its path parsed already (the fast path parses it to decide whether to answer).
    func documentCall(_ method: HTTPRequest.Method, segments: [String], _ uri: URI, _ headers: HTTPFields,
                      _ body: JSON?) throws(HearthError) -> Call {
        let document = segments.count % 2 == 0 ? DocumentPath(uncheckedSegments: segments) : nil
        let collection = CollectionPath(uncheckedSegments: segments)
        func requireDocument() throws(HearthError) -> DocumentPath {
            guard let document else {
                throw .invalidArgument("\(method) needs a document path; '\(collection)' is a collection (it has an odd number of segments)")
            }
            return document
        }
        switch method {
        case .get:
            if let document {
                let params = try QueryParameters(uri, allowed: ["transaction"])
                return Call(operation: .get(document, transaction: params["transaction"]), answer: .document(.ok))
            }
            let params = try QueryParameters(uri, allowed: ["pageSize", "pageToken", "transaction"])
            let size = try params.int("pageSize", range: 1...Limits.maxPageSize, default: Limits.defaultPageSize)
            return Call(operation: .list(collection, pageSize: size, pageToken: params["pageToken"], transaction: params["transaction"]),
                        answer: .page)
        case .post:
            guard document == nil else {
                throw .invalidArgument("POST creates a document in a collection; use PUT to write a document at a path")
            }
            let params = try QueryParameters(uri, allowed: ["id"])
            let path = try collection.document(params["id"] ?? autoIDs.make())
            let write = try Write(kind: "create", path: path, data: body ?? .object([]))
            return Call(operation: .commit(CommitRequest(writes: [write])), answer: .document(.created))
        case .put:
            let path = try requireDocument()
            let params = try QueryParameters(uri, allowed: ["merge"])
            let precondition = try Self.precondition(headers)
            let write = try Write(kind: precondition == .exists(false) ? "create" : "set", path: path, data: body ?? .object([]),
                                  merge: .bool(params.bool("merge")), precondition: precondition)
            return Call(operation: .commit(CommitRequest(writes: [write])), answer: .document(.ok))
        case .patch:
            let path = try requireDocument()
            _ = try QueryParameters(uri, allowed: [])
            let precondition = try Self.precondition(headers)
            if precondition == .exists(false) { throw .invalidArgument("If-None-Match: * cannot apply to an update") }
            let write = try Write(kind: "update", path: path, data: body ?? .object([]), precondition: precondition)
            return Call(operation: .commit(CommitRequest(writes: [write])), answer: .document(.ok))
        case .delete:
            let path = try requireDocument()
            let params = try QueryParameters(uri, allowed: ["recursive"])
            let precondition = try Self.precondition(headers)
            if try params.bool("recursive") {
                if precondition != nil { throw .invalidArgument("a recursive delete takes no precondition") }
                return Call(operation: .deleteRecursive(path), answer: .noContent)
            }
            if precondition == .exists(false) { throw .invalidArgument("If-None-Match: * cannot apply to a delete") }
            return Call(operation: .commit(CommitRequest(writes: [Write(kind: .delete, path: path, precondition: precondition)])),
                        answer: .noContent)
        default:
            throw .invalidArgument("method \(method) is not allowed on \(uri.path)")
        }
    }

    /// The answer to an operation's outcome.
    static func reply(_ outcome: Outcome, _ answer: Answer, _ operation: DatabaseOperation) throws(HearthError) -> JSONReply {
        switch (outcome, answer) {
        case (.document(let doc), .document(let status)):
            guard let doc else {
                if case .get(let path, _) = operation { throw .notFound("no document at \(path)") }
                throw .notFound("no document")
            }
            return documentReply(doc, status: status)
        case (.committed(let result), .document(let status)):
            return documentReply(result.writeResults[0].document!, status: status)
        case (_, .noContent):
            return .noContent
        case (.page(let page), .page):
            var w = JSONWriter(capacity: 256 * page.documents.count + 64)
            writeDocumentsArray(page.documents, to: &w)
            if let token = page.nextPageToken {
                w.raw(",\"nextPageToken\":")
                w.string(token)
            }
            w.raw("}")
            return JSONReply(w.bytes)
        case (.committed(let result), .writeResults):
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
            return JSONReply(w.bytes)
        case (.queried(let result), .queryResult):
            var w = JSONWriter(capacity: 256 * result.documents.count + 64)
            writeDocumentsArray(result.documents, to: &w)
            w.raw(",\"readTime\":\"")
            w.rfc3339(result.readTime)
            w.raw("\"}")
            return JSONReply(w.bytes)
        case (.aggregated(let result), .aggregateResult):
            var w = JSONWriter()
            w.raw("{\"result\":{")
            for (i, alias) in result.order.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(alias)
                w.raw(":")
                (result.values[alias] ?? .null).write(to: &w)
            }
            w.raw("},\"readTime\":\"")
            w.rfc3339(result.readTime)
            w.raw("\"}")
            return JSONReply(w.bytes)
        case (.transaction(let id), .transaction):
            var w = JSONWriter()
            w.raw("{\"transaction\":")
            w.string(id)
            w.raw("}")
            return JSONReply(w.bytes, status: .created)
        case (.collectionIDs(let ids), .collectionIDs):
            return JSONReply(JSON.object([("collectionIds", .array(ids.map { .string($0) }))]).serialized())
        default:
            throw .internal("the outcome \(outcome) does not answer \(answer)")
        }
    }

    /// `If-Match: "<updateTime>"` → the document must have that version; `If-None-Match: *` → it must not exist.
    static func precondition(_ headers: HTTPFields) throws(HearthError) -> Precondition? {
        if let match = headers[.ifMatch] {
            var text = Substring(match.trimmingCharacters(in: .whitespaces))
            if text.hasPrefix("W/") { throw .invalidArgument("If-Match takes a strong ETag, not a weak one") }
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
            guard let t = Timestamp(rfc3339: String(text)) else {
                throw .invalidArgument("If-Match must hold a document's updateTime as an ETag, e.g. \"2026-11-22T10:00:00.000000Z\"")
            }
            return .updateTime(t)
        }
        if let noneMatch = headers[.ifNoneMatch] {
            guard noneMatch.trimmingCharacters(in: .whitespaces) == "*" else {
                throw .invalidArgument("If-None-Match supports only * (create only)")
            }
            return .exists(false)
        }
        return nil
    }

    /// Takes the `"transaction"` field out of a request body, checking it against `?transaction=`.
    static func splitTransaction(_ body: JSON?, _ params: QueryParameters) throws(HearthError) -> (JSON, String?) {
        var transaction = params["transaction"]
        guard case .object(var pairs) = body ?? .object([]) else { return (body ?? .object([]), transaction) }
        if let k = pairs.firstIndex(where: { $0.0 == "transaction" }) {
            guard case .string(let id) = pairs[k].1 else {
                throw .invalidArgument("'transaction' must be a string (the id from POST /v1/transactions)")
            }
            if let other = transaction, other != id {
                throw .invalidArgument("the body's 'transaction' and the ?transaction= parameter name different transactions")
            }
            transaction = id
            pairs.remove(at: k)
        }
        return (.object(pairs), transaction)
    }
}
