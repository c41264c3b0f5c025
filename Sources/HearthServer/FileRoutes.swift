import HearthCore
import HearthEngine
import HearthImages
import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The router's way into the file store (`/v1/files`, docs/api.md, Files): each route makes its request a
/// `FileOperation` (`FileAPI`), the engine performs it, and the answer streams the bytes: a put reads the
/// request body as it arrives, a download leaves from the open blob (`FileRegionWriter`), so memory never
/// grows with an object's size.
struct FileRoutes {
    let database: Database
    let api: FileAPI

    /// The routes, as the router names them (and `/metrics` counts them).
    static let objectRoute = "/v1/files/**"

    func register(on router: Router<HearthRequestContext>) {
        router.get(RouterPath(stringLiteral: FileAPI.listing)) { request, context in try await self.list(request, context) }
        for method in [HTTPRequest.Method.put, .patch, .delete] {
            router.on(RouterPath(stringLiteral: FileAPI.listing), method: method) { _, _ -> Response in
                throw HearthError.invalidArgument("file path is empty: \(method) takes /v1/files/{path}")
            }
        }
        let objects = RouterPath(stringLiteral: Self.objectRoute)
        router.get(objects) { request, context in try await self.get(request, context) }
        // The `GET` answer without its body (the stream it would send is never started).
        router.head(objects) { request, context in
            do {
                return try await self.get(request, context).createHeadResponse()
            } catch {
                // An error's body too would be read as the start of the next answer.
                return ErrorMiddleware<HearthRequestContext>.response(for: error, request: request, logger: context.logger)
                    .createHeadResponse()
            }
        }
        router.put(objects) { request, context in try await self.put(request, context) }
        router.patch(objects) { request, context in
            var request = request
            let path = try FileAPI.path(request.uri)
            _ = try QueryParameters(request.uri, allowed: [])
            let change = try FileAPI.metadataChange(try await request.jsonBody(context: context), headers: request.headers)
            let written = try await self.written(.update(path, change), context)
            return self.answer(written, status: .ok)
        }
        router.delete(objects) { request, context in
            _ = try QueryParameters(request.uri, allowed: [])
            let (ifMatch, _) = try FileAPI.preconditions(request.headers, noneMatchAllowed: false)
            _ = try await database.performFile(.delete(try FileAPI.path(request.uri), ifMatch: ifMatch), as: context.identity)
            return Response(status: .noContent)
        }
    }

    func put(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        // Mapped chunk by chunk, never collected: the engine writes each to a temporary file as it comes.
        let bytes = ByteChunks(request.body.map { Array($0.readableBytesView) })
        let upload = try api.upload(request.uri, headers: request.headers, bytes: bytes)
        if request.headers[.expect]?.lowercased() == "100-continue" {
            // The head passed its checks (the size above all): the client may send the body now.
            try await context.channel.writeAndFlush(HTTPResponsePart.head(HTTPResponse(status: .continue))).get()
        }
        guard case .written(let written) = try await database.performFile(.put(upload), as: context.identity) else {
            throw HearthError.internal("a put comes to a written file")
        }
        return answer(written, status: written.created ? .created : .ok)
    }

    func get(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        let read = try FileAPI.read(request.uri)
        guard case .read(let object) = try await database.performFile(read.operation, as: context.identity) else {
            throw HearthError.internal("a read comes to a file read")
        }
        let file = object.file
        var headers = FileAPI.objectHeaders(file)
        if read.metadataOnly {
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: FileAPI.metadataJSON(file))))
        }
        // A thumbnail is served as the object's bytes are, under its own type and entity tag.
        let etag = object.thumbnail.map { "\(file.etag)-\($0.size)" } ?? file.etag
        let size = object.thumbnail == nil ? file.size : object.handle.size
        headers[.eTag] = "\"\(etag)\""
        headers[.contentType] = object.thumbnail?.format.contentType ?? file.contentType
        if read.download { headers[.contentDisposition] = FileAPI.contentDisposition(file.path) }
        let range: Range<Int64>
        let status: HTTPResponse.Status
        switch ByteRangeRequest.decide(request.headers, etag: etag, lastModified: headers[.lastModified] ?? "", size: size) {
        case .whole:
            (range, status) = (0..<size, .ok)
        case .partial(let part):
            (range, status) = (part, .partialContent)
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)"
        case .notModified:
            return Response(status: .notModified, headers: headers)
        case .preconditionFailed:
            throw HearthError.failedPrecondition("file \(file.path) has etag \(etag), which If-Match does not name")
        case .unsatisfiable:
            var reply = errorReply(.init(.invalidArgument, "Range '\(request.headers[.range]!.prefix(80))' is past the end of file \(file.path) (\(size) bytes)"))
            reply.status = .rangeNotSatisfiable
            reply.headers[.contentRange] = "bytes */\(size)"
            return reply.response
        }
        headers[.contentLength] = String(range.count)
        // A HEAD's answer never writes its body: the blob closes with it.
        let bytes = object.bytes(range)
        return Response(status: status, headers: headers, body: ResponseBody(contentLength: range.count) { [channel = context.channel] writer in
            try await FileRegionWriter.send(bytes, on: channel, through: &writer)
        })
    }

    func list(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        guard case .listed(let listing) = try await database.performFile(.list(try FileAPI.list(request.uri)), as: context.identity) else {
            throw HearthError.internal("a listing comes to a page")
        }
        return jsonResponse(FileAPI.listingJSON(listing))
    }

    private func written(_ operation: FileOperation, _ context: HearthRequestContext) async throws -> FileWritten {
        guard case .written(let written) = try await database.performFile(operation, as: context.identity) else {
            throw HearthError.internal("a write comes to a written file")
        }
        return written
    }

    private func answer(_ written: FileWritten, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.eTag] = "\"\(written.file.etag)\""
        return jsonResponse(FileAPI.metadataJSON(written.file, downloadToken: written.downloadToken), status: status, headers: headers)
    }
}
