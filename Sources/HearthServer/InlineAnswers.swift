import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization
import Prometheus

/// What `InlineAnswerHandler` needs from the server; one value shared by every connection. It decides which
/// requests are answered on the event loop; what they mean, and their answers, are `DocumentAPI`'s and the
/// engine's, as for the router.
struct InlineAnswers: Sendable {
    let database: Database
    let api: DocumentAPI
    let authenticator: Authenticator
    let metrics: ServerMetrics
    let recorder: RequestRecorder
    let logger: Logger
    let serverName: String

    /// A request this handler answers.
    struct Asked: Sendable {
        enum Kind: Sendable {
            /// `GET /v1/docs/{document}`: a point read, answered where it arrives.
            case read
            /// `POST /v1/query`: answered here only if it turns out cheap (see `InlineAnswerHandler`).
            case query
            /// `POST /v1/docs/{collection}`, `PUT`, `PATCH` or `DELETE /v1/docs/{document}`: one document
            /// written by the writer thread, answered from its completion.
            case write

            /// Whether the request's body is read (the router ignores the body of a read or a delete).
            func takesBody(_ method: HTTPRequest.Method) -> Bool {
                self != .read && method != .delete
            }

            /// Largest body held here; a larger one goes to the router, which streams it.
            var maxBody: Int { self == .write ? InlineAnswers.maxWriteBody : InlineAnswers.maxQueryBody }
        }
        let head: HTTPRequest
        let kind: Kind
        /// The document or collection path of a read or a write, parsed once here.
        let segments: [String]?
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
        let kind: Asked.Kind
        var pathSegments: [String]?
        if path.utf8.count > DocumentAPI.documents.utf8.count, path.utf8.starts(with: DocumentAPI.documents.utf8) {
            guard let segments = try? parsePathSegments(String(path.utf8.dropFirst(DocumentAPI.documents.utf8.count))!, percentDecoded: true)
            else { return nil }
            pathSegments = segments
            let document = segments.count % 2 == 0
            switch head.method {
            case .get where document: kind = .read
            case .post where !document, .put where document, .patch where document, .delete where document: kind = .write
            default: return nil
            }
        } else if head.method == .post, path == Self.queryRoute {
            kind = .query
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
        if kind == .write, needsRouter { return nil }
        if kind.takesBody(head.method) {
            if let contentType, !isJSONContentType(contentType) { return nil }
            // A body announced as too large to hold here goes to the router at once (which refuses one over
            // 10 MiB from this header alone, before any of it arrives).
            if let contentLength, (Int(contentLength) ?? .max) > kind.maxBody { return nil }
        }
        return Asked(head: head, kind: kind, segments: pathSegments, authorization: authorization, closing: connection == "close",
                     start: .now)
    }

    /// `read` as `InlineAnswerState` asks it: the request taken and the largest body it holds (nil: none read).
    var takes: @Sendable (HTTPRequest) -> (Asked, maxBody: Int?)? {
        { [self] head in
            read(head).map { asked in (asked, asked.kind.takesBody(head.method) ? asked.kind.maxBody : nil) }
        }
    }

    static let queryRoute = "/v1/query"
    /// Query bodies larger than this go to the router.
    static let maxQueryBody = 16 * 1024
    /// Write bodies larger than this go to the router.
    static let maxWriteBody = 64 * 1024
    /// SQLite instructions a query answered on the event loop may take; a query that needs more is handed to
    /// the router, which runs it on a reader thread. An index scan takes about 20 per row: a query of 20
    /// documents about 400, so this admits about 350 rows (well under a millisecond of work).
    static let queryInstructions = 8_000

    /// The caller and the operation of a request, as the router would understand them.
    func understand(_ asked: Asked, body: ByteBuffer?, adminHeader: inout String?) throws -> (Identity, DocumentAPI.Call) {
        let identity = try identity(asked.authorization, adminHeader: &adminHeader)
        var json: JSON?
        if asked.kind.takesBody(asked.head.method) {
            if let body, body.readableBytes > 0 {
                json = try body.withUnsafeReadableBytes { raw throws(HearthError) in try JSON.parse(raw) }
            } else {
                json = .object([])
            }
        }
        let uri = URI(asked.head.path ?? "")
        let call = if let segments = asked.segments {
            try api.documentCall(asked.head.method, segments: segments, uri, asked.head.headerFields, json)
        } else {
            try api.call(asked.head.method, uri, headers: asked.head.headerFields, body: json, address: nil)
        }
        return (identity, call)
    }

    /// The logger of one request, its `Request` line written (`RequestRecorder`).
    func requestLogger(_ read: Asked) -> Logger {
        var logger = logger
        recorder.log(read.head.method, read.head.path ?? "", on: &logger)
        return logger
    }

    /// The answer to an operation's outcome, or to its failure as `ErrorMiddleware` gives it.
    func reply(_ result: Result<Outcome, any Error>, _ call: DocumentAPI.Call, _ read: Asked, logger: Logger) -> JSONReply {
        do {
            return try DocumentAPI.reply(result.get(), call.answer, call.operation)
        } catch {
            return failure(error, read, logger: logger)
        }
    }

    /// The answer to an error, as `ErrorMiddleware` gives it.
    func failure(_ error: any Error, _ read: Asked, logger: Logger) -> JSONReply {
        var logger = logger
        if logger[metadataKey: "hb.request.id"] == nil {
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        }
        return errorReply(ErrorMiddleware<HearthRequestContext>.hearthError(
            for: error, method: read.head.method, path: read.head.path ?? "", logger: logger))
    }

    /// The caller (`Authenticator`). `adminHeader` is the last header this connection presented that held
    /// the admin key: the same bytes again need no new hash (the key does not change while the server runs).
    func identity(_ authorization: String?, adminHeader: inout String?) throws(HearthError) -> Identity {
        if let authorization, authorization == adminHeader { return .admin }
        let identity = try authenticator.caller(authorization: authorization).identity
        if identity.isAdmin { adminHeader = authorization }
        return identity
    }
}

/// Hands an operation's outcome from whichever thread completes it to the event loop that started it: the
/// starter takes it at once if it came while it was still there, else the loop is told.
final class Rendezvous: Sendable {
    private let state = Mutex<(result: Result<Outcome, any Error>?, starterLeft: Bool)>((nil, false))

    /// Offers the outcome; false when the starter has left, and the caller must bring it to the loop.
    func offer(_ result: Result<Outcome, any Error>) -> Bool {
        state.withLock { state in
            if state.starterLeft { return false }
            state.result = result
            return true
        }
    }

    /// The outcome if it came already; the starter leaves either way.
    func take() -> Result<Outcome, any Error>? {
        state.withLock { state in
            state.starterLeft = true
            return state.result
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

    let answers: InlineAnswers
    /// What to take, hold and pass on (every decision of this handler but what a request means).
    private var state: InlineAnswerState<InlineAnswers.Asked>
    /// The HTTP/1 response encoder's place in the pipeline: answers are written there as finished bytes,
    /// one buffer each. Nil (never in practice) passes every request to the router.
    private var encoder: ChannelHandlerContext?
    /// The connection's `ConnectionGuard`, which says how to frame each answer and hears of each one written.
    private var connection: ConnectionGuard?
    /// The last `Authorization` header of this connection that held the admin key.
    private var adminHeader: String?
    /// The request to quiesce that waits for the request answered here (`state.quiesceHeld`).
    private var quiesceEvent: Any?

    init(_ answers: InlineAnswers) {
        self.answers = answers
        state = InlineAnswerState(takes: answers.takes)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        connection = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self)
        if encoder == nil { state = InlineAnswerState(takes: { _ in nil }) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        encoder = nil
        connection = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch state.received(part) {
        case .forward:
            context.fireChannelRead(data)
        case .hold, .keep:
            break
        case .route(_, let head, let body):
            pass(head, body, nil, context: context)
        case .answer(let read, let head, let received):
            let trailers: HTTPFields?
            if case .end(let fields) = part { trailers = fields } else { trailers = nil }
            start(read, head, received, trailers, context: context)
        }
    }

    /// Starts answering a whole request: understands it, then performs its operation here (a read within the
    /// loop's budget) or hears of it later (a write, from the writer thread).
    private func start(_ read: InlineAnswers.Asked, _ head: HTTPRequest, _ received: ByteBuffer?, _ trailers: HTTPFields?,
                       context: ChannelHandlerContext) {
        let identity: Identity, call: DocumentAPI.Call
        do {
            (identity, call) = try answers.understand(read, body: received, adminHeader: &adminHeader)
        } catch {
            // A query that fails goes to the router whole; a read or a write is answered here.
            if read.kind == .query { return routeEnded(head, received, trailers, context: context) }
            return finish(read, { [answers] logger in answers.failure(error, read, logger: logger) }, context: context)
        }
        if case .query(_, _?) = call.operation { return routeEnded(head, received, trailers, context: context) }
        let rendezvous = Rendezvous()
        let loop = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        answers.database.perform(call.operation, as: identity, placement: .here(instructions: InlineAnswers.queryInstructions)) { result in
            // On the writer thread for a write: the answer is made on the loop, not holding up the next batch.
            guard !rendezvous.offer(result) else { return }
            loop.eventLoop.execute {
                let (handler, context) = loop.value
                handler.finish(read, { logger in handler.answers.reply(result, call, read, logger: logger) }, context: context)
            }
        }
        guard let result = rendezvous.take() else { return state.awaitAnswer() }
        // A query that needs more than the loop gives it, or fails, goes to the router whole.
        if read.kind == .query, case .failure = result { return routeEnded(head, received, trailers, context: context) }
        finish(read, { [answers] logger in answers.reply(result, call, read, logger: logger) }, context: context)
    }

    /// Answers a request (`answer` makes the reply, with the request's logger), then, if the answer was
    /// awaited, takes what arrived meanwhile.
    private func finish(_ read: InlineAnswers.Asked, _ answer: (Logger) -> JSONReply, context: ChannelHandlerContext) {
        let awaited = state.awaiting
        let waiting = state.answered()
        let reply = answer(answers.requestLogger(read))
        switch read.kind {
        case .read: answers.metrics.inlineReads.increment()
        case .query: answers.metrics.inlineQueries.increment()
        case .write: answers.metrics.inlineWrites.increment()
        }
        answers.recorder.answered(route: DocumentAPI.route(of: Substring(read.head.path ?? "")), read.head.method, reply.status,
                                  since: read.start)
        // The connection may have closed meanwhile (the handler is then removed): a write stands, unanswered.
        guard let encoder else { return }
        write(reply, closing: read.closing, to: encoder, context: context)
        if awaited {
            for part in waiting { channelRead(context: context, data: wrapInboundOut(part)) }
            // Parts passed on to the router are delivered to it at the end of a read.
            context.fireChannelReadComplete()
        }
        releaseQuiesce(context: context)
        if state.mayReadAgain(writable: context.channel.isWritable) { context.read() }
    }

    /// Passes a request taken here on to the router: its head, the body held, and its end if it came.
    private func pass(_ head: HTTPRequest, _ body: ByteBuffer?, _ end: HTTPFields??, context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(.head(head)))
        if let body { context.fireChannelRead(wrapInboundOut(.body(body))) }
        if let end { context.fireChannelRead(wrapInboundOut(.end(end))) }
        releaseQuiesce(context: context)
    }

    /// Routes a request whose end came: the router answers it, head, body and end.
    private func routeEnded(_ head: HTTPRequest, _ body: ByteBuffer?, _ trailers: HTTPFields?, context: ChannelHandlerContext) {
        state.routeEnded()
        pass(head, body, .some(trailers), context: context)
    }

    /// Passes on a request to quiesce once nothing is being answered here.
    private func releaseQuiesce(context: ChannelHandlerContext) {
        guard state.mayQuiesce(), let event = quiesceEvent else { return }
        quiesceEvent = nil
        context.fireUserInboundEventTriggered(event)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The router's server closes an idle connection at once: one with a request answered here is not idle.
        if event is ChannelShouldQuiesceEvent, !state.quiesceAsked() {
            quiesceEvent = event
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { state.routedAnswerEnded() }
        context.write(data, promise: promise)
    }

    /// Backpressure: while answers wait for a client that does not read them, the connection reads no more
    /// requests, so a client pipelining reads it never collects cannot make the server buffer without bound.
    /// Nor while an answer is awaited: what comes after it waits for it.
    func read(context: ChannelHandlerContext) {
        if state.readAsked(writable: context.channel.isWritable) { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if state.mayReadAgain(writable: context.channel.isWritable) { context.read() }
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
        for field in connection?.crossOriginFields(framing, responseNames: reply.headers.lazy.map(\.name.rawName)) ?? [] {
            out.writeString(field.name)
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
