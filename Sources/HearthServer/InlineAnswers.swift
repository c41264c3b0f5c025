import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization

/// What `InlineAnswerHandler` needs from the server; one value shared by every connection.
struct InlineAnswers: Sendable {
    let database: Database
    let adminKey: AdminKey
    let auth: AuthService
    let metrics: ServerMetrics
    let logger: Logger
    let requestLogLevel: Logger.Level
    let serverName: String
    /// How documents created without an id are named.
    let autoIDs: AutoIDs
    /// Whether access tokens can be checked without suspending (the storage is SQLite's); when not, reads
    /// that carry an `Authorization` header go to the router.
    let authenticatesImmediately: Bool

    init(database: Database, adminKey: AdminKey, auth: AuthService, metrics: ServerMetrics, logger: Logger,
         requestLogLevel: Logger.Level, serverName: String, autoIDs: AutoIDs) {
        self.database = database
        self.adminKey = adminKey
        self.auth = auth
        self.metrics = metrics
        self.logger = logger
        self.requestLogLevel = requestLogLevel
        self.serverName = serverName
        self.autoIDs = autoIDs
        authenticatesImmediately = auth.authenticatesImmediately
    }

    /// The router's name for the same endpoint, so that `/metrics` counts both ways in one series.
    static let route = "/v1/docs/**"
    static let prefix = "/v1/docs/"

    /// A request this handler answers.
    struct Asked: Sendable {
        enum Target: Sendable {
            /// `GET /v1/docs/{document}`.
            case document(DocumentPath)
            /// `POST /v1/query`: answered here only if it turns out cheap (see `answerQuery`).
            case query
            /// `POST /v1/docs/{collection}`, `PUT`, `PATCH` or `DELETE /v1/docs/{document}`: one document
            /// written by the writer thread, answered from its completion (see `InlineAnswerHandler`).
            case write(WriteRoute)

            /// Whether the request's body is read (the router ignores the body of a read or a delete).
            var takesBody: Bool {
                switch self {
                case .document, .write(.delete): return false
                case .query, .write: return true
                }
            }
        }
        enum WriteRoute: Sendable {
            case create(CollectionPath)
            case set(DocumentPath)
            case update(DocumentPath)
            case delete(DocumentPath)
        }
        let head: HTTPRequest
        let target: Target
        let authorization: String?
        /// `Connection: close`: answer, then close, as the router does.
        let closing: Bool
        let start: ContinuousClock.Instant
    }

    /// The request a head starts, when it is one this handler may answer: with no query string, a
    /// `GET /v1/docs/{document}`, a `POST /v1/query` with a JSON body, or a plain single-document write
    /// (`POST /v1/docs/{collection}`, `PUT` or `PATCH /v1/docs/{document}` with a JSON body, or
    /// `DELETE /v1/docs/{document}`, with no `If-Match`, `If-None-Match` or `Expect` header). Anything else,
    /// including an invalid path, goes to the router, which answers it (and its errors) as always.
    func read(_ head: HTTPRequest) -> Asked? {
        guard let path = head.path, !path.utf8.contains(UInt8(ascii: "?")) else { return nil }
        let target: Asked.Target
        if path.utf8.count > Self.prefix.utf8.count, path.utf8.starts(with: Self.prefix.utf8),
           head.method == .get || head.method == .post || head.method == .put || head.method == .patch
            || head.method == .delete {
            guard let segments = try? parsePathSegments(String(path.utf8.dropFirst(Self.prefix.utf8.count))!, percentDecoded: true)
            else { return nil }
            let document = segments.count % 2 == 0
            switch head.method {
            case .get where document: target = .document(DocumentPath(uncheckedSegments: segments))
            case .post where !document: target = .write(.create(CollectionPath(uncheckedSegments: segments)))
            case .put where document: target = .write(.set(DocumentPath(uncheckedSegments: segments)))
            case .patch where document: target = .write(.update(DocumentPath(uncheckedSegments: segments)))
            case .delete where document: target = .write(.delete(DocumentPath(uncheckedSegments: segments)))
            default: return nil
            }
        } else if head.method == .post, path == Self.queryRoute {
            target = .query
        } else {
            return nil
        }
        // One pass over the headers (the subscript joins repeated fields into a new string each time).
        var authorization: String?, connection: String?, contentType: String?, contentLength: String?
        var needsRouter = false
        for field in head.headerFields {
            if field.name == .authorization {
                authorization = authorization.map { $0 + ", " + field.value } ?? field.value
            } else if field.name == .connection {
                connection = connection.map { $0 + ", " + field.value } ?? field.value
            } else if field.name == .contentType {
                contentType = contentType.map { $0 + ", " + field.value } ?? field.value
            } else if field.name == .contentLength {
                contentLength = contentLength.map { $0 + ", " + field.value } ?? field.value
            } else if field.name == .ifMatch || field.name == .ifNoneMatch || field.name == .expect {
                needsRouter = true
            }
        }
        if authorization != nil, !authenticatesImmediately { return nil }
        if case .write = target, needsRouter { return nil }
        if target.takesBody {
            if let contentType, !isJSONContentType(contentType) { return nil }
            // A body announced as too large to hold here goes to the router at once (which refuses one over
            // 10 MiB from this header alone, before any of it arrives).
            if let contentLength, (Int(contentLength) ?? .max) > Self.maxBody(target) { return nil }
        }
        return Asked(head: head, target: target, authorization: authorization, closing: connection == "close", start: .now)
    }

    static let queryRoute = "/v1/query"
    /// Query bodies larger than this go to the router.
    static let maxQueryBody = 16 * 1024
    /// Write bodies larger than this go to the router.
    static let maxWriteBody = 64 * 1024

    static func maxBody(_ target: Asked.Target) -> Int {
        if case .write = target { return maxWriteBody }
        return maxQueryBody
    }
    /// SQLite instructions a query answered on the event loop may take; a query that needs more is handed to
    /// the router, which runs it on a reader thread. An index scan takes about 20 per row: a query of 20
    /// documents about 400, so this admits about 350 rows (well under a millisecond of work).
    static let queryInstructions = 8_000

    /// The answer to a document read, exactly as the router's middleware and `DocumentRoutes.get` give it.
    func answer(_ read: Asked, _ path: DocumentPath, adminHeader: inout String?) -> JSONReply {
        var logger = requestLogger(read)
        do {
            guard let doc = try database.getNow(path, as: identity(read.authorization, adminHeader: &adminHeader)) else {
                throw HearthError.notFound("no document at \(path)")
            }
            return documentReply(doc)
        } catch {
            return failure(error, read, logger: &logger)
        }
    }

    /// The logger of one request, with the request's log line written, as `LogRequestsMiddleware` does.
    func requestLogger(_ read: Asked) -> Logger {
        var logger = logger
        if logger.logLevel <= requestLogLevel {
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            logger.log(level: requestLogLevel, "Request",
                       metadata: ["hb.request.path": .string(read.head.path ?? ""),
                                  "hb.request.method": .string(read.head.method.rawValue)])
        }
        return logger
    }

    /// The answer to an error, as `ErrorMiddleware` gives it.
    func failure(_ error: any Error, _ read: Asked, logger: inout Logger) -> JSONReply {
        if logger[metadataKey: "hb.request.id"] == nil {
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        }
        return errorReply(ErrorMiddleware<HearthRequestContext>.hearthError(
            for: error, method: read.head.method, path: read.head.path ?? "", logger: logger))
    }

    /// Starts a single-document write as `DocumentRoutes` makes it (`create`, `set` without merge, `update`):
    /// the caller, the body, the write, then the commit on the writer thread. Answers the reply at once when
    /// the request fails before its commit; otherwise nil, and `completion` runs on the writer thread once
    /// the commit is durable or has failed, with what makes the reply: the writer hands it on to be called
    /// elsewhere, so that encoding the answer does not hold up the next batch of writes.
    func startWrite(_ read: Asked, _ route: Asked.WriteRoute, body: ByteBuffer?, adminHeader: inout String?,
                    completion: @escaping @Sendable (@escaping @Sendable () -> JSONReply) -> Void) -> JSONReply? {
        var logger = requestLogger(read)
        do {
            let identity = try identity(read.authorization, adminHeader: &adminHeader)
            let json: JSON
            if let body, body.readableBytes > 0 {
                json = try body.withUnsafeReadableBytes { raw throws(HearthError) in try JSON.parse(raw) }
            } else {
                json = .object([])
            }
            let write: Write
            switch route {
            case .create(let collection): write = try DocumentRoutes.createWrite(collection.document(autoIDs.make()), json)
            case .set(let path): write = try DocumentRoutes.setWrite(path, json)
            case .update(let path): write = try DocumentRoutes.updateWrite(path, json)
            case .delete(let path): write = Write(kind: .delete, path: path)
            }
            database.commit(CommitRequest(writes: [write]), as: identity) { [self, logger] result in
                completion {
                    var logger = logger
                    switch result {
                    case .success(let committed):
                        switch route {
                        case .create: return documentReply(committed.writeResults[0].document!, status: .created)
                        case .set, .update: return documentReply(committed.writeResults[0].document!)
                        case .delete: return .noContent
                        }
                    case .failure(let error): return failure(error, read, logger: &logger)
                    }
                }
            }
            return nil
        } catch {
            return failure(error, read, logger: &logger)
        }
    }

    /// The answer to `POST /v1/query` as `QueryRoutes.query` gives it, when the query runs outside a
    /// transaction and takes at most `queryInstructions` of SQLite's work; nil for everything else
    /// (transactions, longer queries and every error), which the router then answers.
    func answerQuery(_ read: Asked, body: ByteBuffer?, adminHeader: inout String?) -> JSONReply? {
        guard let body, body.readableBytes > 0 else { return nil }
        do throws(HearthError) {
            let json = try body.withUnsafeReadableBytes { raw throws(HearthError) in try JSON.parse(raw) }
            guard case .object(let pairs) = json, !pairs.contains(where: { $0.0 == "transaction" }) else { return nil }
            let query = try Query(json: json)
            let identity = try identity(read.authorization, adminHeader: &adminHeader)
            guard let result = try? database.queryNow(query, as: identity, instructions: Self.queryInstructions) else { return nil }
            // Logged only once answered here: a query handed on is logged by the router.
            _ = requestLogger(read)
            return QueryRoutes.reply(result)
        } catch {
            return nil
        }
    }

    /// The caller, as `AuthMiddleware` decides it.
    /// `adminHeader` is the last header this connection presented that held the admin key: the same bytes
    /// again need no new hash (the key does not change while the server runs).
    func identity(_ authorization: String?, adminHeader: inout String?) throws(HearthError) -> Identity {
        guard let header = authorization else { return .unauthenticated }
        if header == adminHeader { return .admin }
        switch try Credentials(header, adminKey: adminKey) {
        case .admin:
            adminHeader = header
            return .admin
        case .accessToken(let token):
            guard let (identity, _) = try auth.authenticateNow(accessToken: token) else {
                throw .internal("access tokens cannot be checked on this path")
            }
            return identity
        }
    }
}

/// Answers plain document reads (`GET /v1/docs/{document}`, no query string), cheap queries and plain
/// single-document writes on the connection's event loop, ahead of the router.
///
/// A routed request hops from the event loop to a task and back, and those two thread switches cost more
/// than a read itself: a point read and its rules take microseconds. This handler answers such a request
/// where it arrives, with the router's behaviour: the same authentication, rules, bodies, headers,
/// `/metrics` series and request log. Every other request passes through to the router untouched, and so
/// does any request that arrives while a routed one on the same connection is still unanswered, so that
/// pipelined answers keep their order.
///
/// Queries (`POST /v1/query`) are held until their body has come, then tried here with SQLite's work
/// bounded; one that needs more, or fails, is passed on to the router whole (head, body, end), as if it had
/// never stopped here.
///
/// Writes (`POST /v1/docs/{collection}`, `PUT`, `PATCH` and `DELETE /v1/docs/{document}` without a query
/// string or a precondition header) are handed from here to the writer thread, and answered here when their
/// commit completes: one hop each way instead of four. While one is in flight the connection reads nothing more,
/// and whatever it had already received waits here, in order, as does a request to quiesce (graceful
/// shutdown), so that the write is answered before anything after it.
final class InlineAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let answers: InlineAnswers
    /// Requests passed to the router whose answers have not ended yet.
    private var routed = 0
    /// The request being received (its head has come, its end not yet).
    private var pending: InlineAnswers.Asked?
    /// The body received so far of a pending query or write.
    private var body: ByteBuffer?
    /// The HTTP/1 response encoder's place in the pipeline: answers are written there as finished bytes,
    /// one buffer each. Nil (never in practice) passes every request to the router.
    private var encoder: ChannelHandlerContext?
    /// The connection's `ConnectionGuard`, which says how to frame each answer and hears of each one written.
    private var connection: ConnectionGuard?
    /// The last `Authorization` header of this connection that held the admin key.
    private var adminHeader: String?
    /// A read the pipeline asked for while the connection was not writable, or while a write was in
    /// flight, to pass on once it may.
    private var readHeld = false
    /// Whether a write answered here is in flight (handed to the writer thread, not answered yet).
    private var writing = false
    /// Request parts that arrived while a write was in flight, to take in order once it is answered.
    private var held: [HTTPRequestPart] = []
    /// A request to quiesce that arrived while a request was being answered here.
    private var heldQuiesce: Any?

    init(_ answers: InlineAnswers) {
        self.answers = answers
    }

    func handlerAdded(context: ChannelHandlerContext) {
        encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        connection = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        encoder = nil
        connection = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if writing { return held.append(part) }
        switch part {
        case .head(let head):
            if routed == 0, encoder != nil, let read = answers.read(head) {
                pending = read
            } else {
                routed += 1
                context.fireChannelRead(data)
            }
        case .body(let part):
            guard let read = pending else { return context.fireChannelRead(data) }
            // A body on a document read or a delete is ignored, as the router ignores it.
            guard read.target.takesBody else { return }
            if body == nil {
                body = part
            } else {
                body!.writeImmutableBuffer(part)
            }
            if body!.readableBytes > InlineAnswers.maxBody(read.target) {
                // Too large to hold here: the router reads it, and the rest of it, as it arrives.
                route(read, context: context)
            }
        case .end(let trailers):
            guard let read = pending, let encoder else { return context.fireChannelRead(data) }
            pending = nil
            let reply: JSONReply
            let routeName: String
            switch read.target {
            case .document(let path):
                reply = answers.answer(read, path, adminHeader: &adminHeader)
                routeName = InlineAnswers.route
                answers.metrics.inlineReads.increment()
            case .query:
                guard let answer = answers.answerQuery(read, body: body, adminHeader: &adminHeader) else {
                    route(read, context: context)
                    return context.fireChannelRead(wrapInboundOut(.end(trailers)))
                }
                body = nil
                reply = answer
                routeName = InlineAnswers.queryRoute
                answers.metrics.inlineQueries.increment()
            case .write(let target):
                let part = body
                body = nil
                let loop = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let immediate = answers.startWrite(read, target, body: part, adminHeader: &adminHeader) { reply in
                    loop.eventLoop.execute {
                        let (handler, context) = loop.value
                        handler.finishWrite(read, reply(), context: context)
                    }
                }
                guard let immediate else {
                    writing = true
                    return
                }
                reply = immediate
                routeName = InlineAnswers.route
                answers.metrics.inlineWrites.increment()
            }
            write(reply, closing: read.closing, to: encoder, context: context)
            answers.metrics.record(route: routeName, method: read.head.method, status: reply.status, duration: .now - read.start)
            releaseQuiesce(context: context)
        }
    }

    /// Answers a write whose commit completed, then takes what arrived meanwhile.
    private func finishWrite(_ read: InlineAnswers.Asked, _ reply: JSONReply, context: ChannelHandlerContext) {
        writing = false
        answers.metrics.inlineWrites.increment()
        answers.metrics.record(route: InlineAnswers.route, method: read.head.method, status: reply.status, duration: .now - read.start)
        // The connection may have closed meanwhile (the handler is then removed): the write stands, unanswered.
        guard let encoder else { return }
        write(reply, closing: read.closing, to: encoder, context: context)
        let parts = held
        held = []
        for (k, part) in parts.enumerated() {
            if writing {
                // Another write began: the rest waits for it.
                held.append(contentsOf: parts[k...])
                break
            }
            channelRead(context: context, data: wrapInboundOut(part))
        }
        // Parts passed on to the router are delivered to it at the end of a read.
        context.fireChannelReadComplete()
        releaseQuiesce(context: context)
        if !writing, readHeld, context.channel.isWritable {
            readHeld = false
            context.read()
        }
    }

    /// Passes on a request to quiesce once nothing is being answered here.
    private func releaseQuiesce(context: ChannelHandlerContext) {
        guard !writing, pending == nil, let event = heldQuiesce else { return }
        heldQuiesce = nil
        context.fireUserInboundEventTriggered(event)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The router's server closes an idle connection at once: one with a request answered here is not idle.
        if event is ChannelShouldQuiesceEvent, writing || pending != nil {
            heldQuiesce = event
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Passes a request held so far (its head and any body received) on to the router.
    private func route(_ read: InlineAnswers.Asked, context: ChannelHandlerContext) {
        pending = nil
        routed += 1
        context.fireChannelRead(wrapInboundOut(.head(read.head)))
        if let part = body {
            body = nil
            context.fireChannelRead(wrapInboundOut(.body(part)))
        }
        releaseQuiesce(context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed -= 1 }
        context.write(data, promise: promise)
    }

    /// Backpressure: while answers wait for a client that does not read them, the connection reads no more
    /// requests, so a client pipelining reads it never collects cannot make the server buffer without bound.
    /// Nor while a write is in flight: what comes after it waits for its answer.
    func read(context: ChannelHandlerContext) {
        if !writing, context.channel.isWritable { context.read() } else { readHeld = true }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if readHeld, !writing, context.channel.isWritable {
            readHeld = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    /// Writes an answer as HTTP/1 bytes below the response encoder, as the encoder would have written the
    /// router's answer (framed by `ConnectionGuard` as it frames those): status line, the reply's headers,
    /// `Connection` when it closes or keeps an HTTP/1.0 connection, `Content-Length`, `Date`, `Server`, body.
    private func write(_ reply: JSONReply, closing: Bool, to encoder: ChannelHandlerContext, context: ChannelHandlerContext) {
        let framing = connection?.nextAnswer
        let http10 = framing?.http10 == true
        let closing = closing || framing?.closes == true
        var out = context.channel.allocator.buffer(capacity: reply.bytes.count + 256)
        out.writeStaticString(http10 ? "HTTP/1.0 " : "HTTP/1.1 ")
        out.writeString("\(reply.status.code) \(reply.status.reasonPhrase)\r\n")
        for field in reply.headers {
            out.writeString(field.name.rawName)
            out.writeStaticString(": ")
            out.writeString(field.value)
            out.writeStaticString("\r\n")
        }
        if closing {
            out.writeStaticString("Connection: close\r\n")
        } else if http10 {
            out.writeStaticString("Connection: keep-alive\r\n")
        }
        // HTTP forbids `Content-Length` on a 204.
        if reply.status != .noContent { out.writeString("Content-Length: \(reply.bytes.count)\r\n") }
        out.writeString("Date: \(HTTPDate.now())\r\nServer: \(answers.serverName)\r\n\r\n")
        out.writeBytes(reply.bytes)
        if closing {
            // As the router does for `Connection: close`: answer, then close.
            let channel = context.channel
            encoder.writeAndFlush(NIOAny(IOData.byteBuffer(out))).whenComplete { _ in channel.close(promise: nil) }
        } else {
            encoder.writeAndFlush(NIOAny(IOData.byteBuffer(out)), promise: nil)
        }
        connection?.answeredInline()
    }
}

/// The `Date` header's value (RFC 9110's IMF-fixdate), formatted once per second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((0, ""))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        let second = time(nil)
        return cache.withLock { cached in
            if cached.second != second { cached = (second, format(second)) }
            return cached.text
        }
    }

    static func format(_ second: Int) -> String {
        var seconds = second
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
