import HearthCore
import HearthEngine
import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The router's way into resumable uploads (`/v1/uploads`, tus 1.0.0; docs/api.md, Resumable uploads): each
/// route makes its request an upload operation (`TusAPI`) and the engine performs it; a `PATCH` hands its
/// body to the engine as it arrives, never collected. Every answer, refusals included, carries
/// `Tus-Resumable`.
struct UploadRoutes {
    let database: Database
    let api: TusAPI

    /// The routes, as the router names them (and `/metrics` counts them).
    static let uploadRoute = "/v1/uploads/{id}"

    func register(on router: Router<HearthRequestContext>) {
        let collection = RouterPath(stringLiteral: TusAPI.collection)
        let upload = RouterPath(stringLiteral: Self.uploadRoute)
        for path in [collection, upload] {
            router.on(path, method: .options) { _, _ in
                Response(status: .noContent, headers: self.api.discoveryHeaders())
            }
        }
        router.post(collection) { request, context in
            try await self.answer { try await self.create(request, context) }
        }
        router.head(upload) { request, context in
            // The answer without a body: a refusal's too would be read as the start of the next answer.
            try await self.answer { try await self.status(request, context) }.createHeadResponse()
        }
        router.patch(upload) { request, context in
            try await self.answer { try await self.patch(request, context) }
        }
        router.delete(upload) { request, context in
            try await self.answer {
                try TusAPI.checkResumable(request.headers)
                _ = try await database.performFile(.cancelUpload(id: try Self.id(context)), as: context.identity)
                return Response(status: .noContent, headers: TusAPI.baseHeaders())
            }
        }
    }

    /// `POST /v1/uploads`: creation, with the first bytes when the body is `application/offset+octet-stream`
    /// (creation-with-upload). An empty upload is finished at once.
    func create(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        try TusAPI.checkResumable(request.headers)
        _ = try QueryParameters(request.uri, allowed: [])
        let start = try api.start(request.headers)
        let announced = try TusAPI.contentLength(request.headers)
        let withBytes = TusAPI.isOffsetOctetStream(request.headers)
        if !withBytes, (announced ?? 0) > 0 {
            throw HearthError(.unsupportedMediaType,
                              "a creation's body must be \(TusAPI.offsetOctetStream) (creation-with-upload), or empty")
        }
        guard case .upload(var status) = try await database.performFile(.startUpload(start), as: context.identity) else {
            throw HearthError.internal("an upload's start comes to its status")
        }
        let location = "\(TusAPI.collection)/\(status.upload.id)"
        if withBytes || start.length == 0 {
            do {
                status = try await append(request, id: status.upload.id, offset: 0, announced: announced, context)
            } catch {
                // The upload exists: the client may ask its offset and go on.
                guard var reply = TusAPI.reply(for: error) else { throw error }
                reply.headers[.location] = location
                return reply.response
            }
        }
        var headers = TusAPI.statusHeaders(status.upload)
        headers[.location] = location
        return Response(status: .created, headers: headers)
    }

    /// `HEAD /v1/uploads/{id}`: the offset of the bytes in and synced.
    func status(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        try TusAPI.checkResumable(request.headers)
        guard case .upload(let status) = try await database.performFile(.uploadStatus(id: try Self.id(context)), as: context.identity) else {
            throw HearthError.internal("an upload's status comes to its status")
        }
        return Response(status: .ok, headers: TusAPI.statusHeaders(status.upload, metadata: true))
    }

    /// `PATCH /v1/uploads/{id}`: bytes at the upload's offset.
    func patch(_ request: Request, _ context: HearthRequestContext) async throws -> Response {
        try TusAPI.checkResumable(request.headers)
        try TusAPI.checkPatchType(request.headers)
        let offset = try TusAPI.offset(request.headers)
        let status = try await append(request, id: try Self.id(context), offset: offset,
                                      announced: try TusAPI.contentLength(request.headers), context)
        return Response(status: .noContent, headers: TusAPI.statusHeaders(status.upload))
    }

    private func append(_ request: Request, id: String, offset: Int64, announced: Int64?,
                        _ context: HearthRequestContext) async throws -> UploadStatus {
        var body = ByteChunks(request.body.map { Array($0.readableBytesView) })
        if request.headers[.expect]?.lowercased() == "100-continue" { body = Self.continuing(body, context) }
        let append = UploadAppend(id: id, offset: offset, bytes: announced.map { FileAPI.exactly($0, body) } ?? body,
                                  checksum: try TusAPI.checksum(request.headers), announcedLength: announced)
        guard case .upload(let status) = try await database.performFile(.appendUpload(append), as: context.identity) else {
            throw HearthError.internal("an upload's bytes come to its status")
        }
        return status
    }

    /// The body, answering `100 Continue` when it is first read: the engine reads it only once the upload,
    /// the caller and the offset passed their checks, so a client that waits never sends bytes in vain.
    static func continuing(_ body: ByteChunks, _ context: HearthRequestContext) -> ByteChunks {
        let reader = ContinuingReader(body)
        return ByteChunks(next: {
            if !reader.continued {
                reader.continued = true
                try await context.channel.writeAndFlush(HTTPResponsePart.head(HTTPResponse(status: .continue))).get()
            }
            return try await reader.iterator.next()
        })
    }

    static func id(_ context: HearthRequestContext) throws(HearthError) -> String {
        guard let id = context.parameters.get("id") else { throw .invalidArgument("the upload's id is missing") }
        return id
    }

    /// Runs a route, answering its refusals in the one error shape with tus's statuses and headers.
    private func answer(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch {
            guard let reply = TusAPI.reply(for: error) else { throw error }
            return reply.response
        }
    }
}

/// A body read by one task at a time, and whether `100 Continue` went out.
private final class ContinuingReader: @unchecked Sendable {
    var iterator: ByteChunks.AsyncIterator
    var continued = false

    init(_ body: ByteChunks) { iterator = body.makeAsyncIterator() }
}
