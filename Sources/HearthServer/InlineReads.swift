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

/// What `InlineReadHandler` needs from the server; one value shared by every connection.
struct InlineReads: Sendable {
    let database: Database
    let adminKey: AdminKey
    let auth: AuthService
    let metrics: ServerMetrics
    let logger: Logger
    let requestLogLevel: Logger.Level
    let serverName: String
    /// Whether access tokens can be checked without suspending (the storage is SQLite's); when not, reads
    /// that carry an `Authorization` header go to the router.
    let authenticatesImmediately: Bool

    init(database: Database, adminKey: AdminKey, auth: AuthService, metrics: ServerMetrics, logger: Logger,
         requestLogLevel: Logger.Level, serverName: String) {
        self.database = database
        self.adminKey = adminKey
        self.auth = auth
        self.metrics = metrics
        self.logger = logger
        self.requestLogLevel = requestLogLevel
        self.serverName = serverName
        authenticatesImmediately = auth.authenticatesImmediately
    }

    /// The router's name for the same endpoint, so that `/metrics` counts both ways in one series.
    static let route = "/v1/docs/**"
    static let prefix = "/v1/docs/"

    /// A read this handler answers.
    struct Read {
        enum Target {
            /// `GET /v1/docs/{document}`.
            case document(DocumentPath)
            /// `POST /v1/query`: answered here only if it turns out cheap (see `answerQuery`).
            case query
        }
        let head: HTTPRequest
        let target: Target
        let authorization: String?
        /// `Connection: close`: answer, then close, as the router does.
        let closing: Bool
        let start: ContinuousClock.Instant
    }

    /// The read a request asks for, when it is one this handler may answer: `GET /v1/docs/{document}` with
    /// no query string and a valid path, or `POST /v1/query` with no query string and a JSON body. Anything
    /// else, including an invalid path, goes to the router, which answers it (and its errors) as always.
    func read(_ head: HTTPRequest) -> Read? {
        guard let path = head.path, !path.utf8.contains(UInt8(ascii: "?")) else { return nil }
        let target: Read.Target
        if head.method == .get, path.utf8.count > Self.prefix.utf8.count, path.utf8.starts(with: Self.prefix.utf8) {
            guard let segments = try? parsePathSegments(String(path.utf8.dropFirst(Self.prefix.utf8.count))!, percentDecoded: true),
                  segments.count % 2 == 0 else { return nil }
            target = .document(DocumentPath(uncheckedSegments: segments))
        } else if head.method == .post, path == Self.queryRoute {
            target = .query
        } else {
            return nil
        }
        // One pass over the headers (the subscript joins repeated fields into a new string each time).
        var authorization: String?, connection: String?, contentType: String?, contentLength: String?
        for field in head.headerFields {
            if field.name == .authorization {
                authorization = authorization.map { $0 + ", " + field.value } ?? field.value
            } else if field.name == .connection {
                connection = connection.map { $0 + ", " + field.value } ?? field.value
            } else if field.name == .contentType {
                contentType = contentType.map { $0 + ", " + field.value } ?? field.value
            } else if field.name == .contentLength {
                contentLength = contentLength.map { $0 + ", " + field.value } ?? field.value
            }
        }
        if authorization != nil, !authenticatesImmediately { return nil }
        if case .query = target {
            if let contentType, !isJSONContentType(contentType) { return nil }
            // A body announced as too large to hold here goes to the router at once (which refuses one over
            // 10 MiB from this header alone, before any of it arrives).
            if let contentLength, (Int(contentLength) ?? .max) > Self.maxQueryBody { return nil }
        }
        return Read(head: head, target: target, authorization: authorization, closing: connection == "close", start: .now)
    }

    static let queryRoute = "/v1/query"
    /// Query bodies larger than this go to the router.
    static let maxQueryBody = 16 * 1024
    /// SQLite instructions a query answered on the event loop may take; a query that needs more is handed to
    /// the router, which runs it on a reader thread. An index scan takes about 20 per row: a query of 20
    /// documents about 400, so this admits about 350 rows (well under a millisecond of work).
    static let queryInstructions = 8_000

    /// The answer to a document read, exactly as the router's middleware and `DocumentRoutes.get` give it.
    func answer(_ read: Read, _ path: DocumentPath, adminHeader: inout String?) -> JSONReply {
        let head = read.head
        var logger = logger
        if logger.logLevel <= requestLogLevel {
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            logger.log(level: requestLogLevel, "Request",
                       metadata: ["hb.request.path": .string(head.path ?? ""), "hb.request.method": .string("GET")])
        }
        do {
            guard let doc = try database.getNow(path, as: identity(read.authorization, adminHeader: &adminHeader)) else {
                throw HearthError.notFound("no document at \(path)")
            }
            return documentReply(doc)
        } catch {
            if logger[metadataKey: "hb.request.id"] == nil {
                logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            }
            return errorReply(ErrorMiddleware<HearthRequestContext>.hearthError(
                for: error, method: .get, path: head.path ?? "", logger: logger))
        }
    }

    /// The answer to `POST /v1/query` as `QueryRoutes.query` gives it, when the query runs outside a
    /// transaction and takes at most `queryInstructions` of SQLite's work; nil for everything else
    /// (transactions, longer queries and every error), which the router then answers.
    func answerQuery(_ read: Read, body: ByteBuffer?, adminHeader: inout String?) -> JSONReply? {
        guard let body, body.readableBytes > 0 else { return nil }
        do throws(HearthError) {
            let json = try body.withUnsafeReadableBytes { raw throws(HearthError) in try JSON.parse(raw) }
            guard case .object(let pairs) = json, !pairs.contains(where: { $0.0 == "transaction" }) else { return nil }
            let query = try Query(json: json)
            let identity = try identity(read.authorization, adminHeader: &adminHeader)
            guard let result = try? database.queryNow(query, as: identity, instructions: Self.queryInstructions) else { return nil }
            if logger.logLevel <= requestLogLevel {
                var logger = logger
                logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
                logger.log(level: requestLogLevel, "Request",
                           metadata: ["hb.request.path": .string(Self.queryRoute), "hb.request.method": .string("POST")])
            }
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

/// Answers plain document reads (`GET /v1/docs/{document}`, no query string) on the connection's event
/// loop, ahead of the router.
///
/// A routed request hops from the event loop to a task and back, and those two thread switches cost more
/// than the read itself: a point read and its rules take microseconds. This handler answers such a request
/// where it arrives, with the router's behaviour: the same authentication, rules, bodies, headers,
/// `/metrics` series and request log. Every other request passes through to the router untouched, and so
/// does any request that arrives while a routed one on the same connection is still unanswered, so that
/// pipelined answers keep their order.
///
/// Queries (`POST /v1/query`) are held until their body has come, then tried here with SQLite's work
/// bounded; one that needs more, or fails, is passed on to the router whole (head, body, end), as if it had
/// never stopped here.
final class InlineReadHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let reads: InlineReads
    /// Requests passed to the router whose answers have not ended yet.
    private var routed = 0
    /// The read being received (its head has come, its end not yet).
    private var pending: InlineReads.Read?
    /// The body received so far of a pending query.
    private var body: ByteBuffer?
    /// The HTTP/1 response encoder's place in the pipeline: answers are written there as finished bytes,
    /// one buffer each. Nil (never in practice) passes every request to the router.
    private var encoder: ChannelHandlerContext?
    /// The last `Authorization` header of this connection that held the admin key.
    private var adminHeader: String?
    /// A read the pipeline asked for while the connection was not writable, to pass on once it is.
    private var readHeld = false

    init(_ reads: InlineReads) {
        self.reads = reads
    }

    func handlerAdded(context: ChannelHandlerContext) {
        encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        encoder = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if routed == 0, encoder != nil, let read = reads.read(head) {
                pending = read
            } else {
                routed += 1
                context.fireChannelRead(data)
            }
        case .body(let part):
            guard let read = pending else { return context.fireChannelRead(data) }
            // A body on a document read is ignored, as the router ignores it.
            guard case .query = read.target else { return }
            if body == nil {
                body = part
            } else {
                body!.writeImmutableBuffer(part)
            }
            if body!.readableBytes > InlineReads.maxQueryBody {
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
                reply = reads.answer(read, path, adminHeader: &adminHeader)
                routeName = InlineReads.route
                reads.metrics.inlineReads.increment()
            case .query:
                guard let answer = reads.answerQuery(read, body: body, adminHeader: &adminHeader) else {
                    route(read, context: context)
                    return context.fireChannelRead(wrapInboundOut(.end(trailers)))
                }
                body = nil
                reply = answer
                routeName = InlineReads.queryRoute
                reads.metrics.inlineQueries.increment()
            }
            write(reply, closing: read.closing, to: encoder, context: context)
            reads.metrics.record(route: routeName, method: read.head.method, status: reply.status, duration: .now - read.start)
        }
    }

    /// Passes a request held so far (its head and any body received) on to the router.
    private func route(_ read: InlineReads.Read, context: ChannelHandlerContext) {
        pending = nil
        routed += 1
        context.fireChannelRead(wrapInboundOut(.head(read.head)))
        if let part = body {
            body = nil
            context.fireChannelRead(wrapInboundOut(.body(part)))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed -= 1 }
        context.write(data, promise: promise)
    }

    /// Backpressure: while answers wait for a client that does not read them, the connection reads no more
    /// requests, so a client pipelining reads it never collects cannot make the server buffer without bound.
    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable { context.read() } else { readHeld = true }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if readHeld, context.channel.isWritable {
            readHeld = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    /// Writes an answer as HTTP/1.1 bytes below the response encoder, as the encoder would have written
    /// the router's answer: status line, the reply's headers, `Content-Length`, `Date`, `Server`, body.
    private func write(_ reply: JSONReply, closing: Bool, to encoder: ChannelHandlerContext, context: ChannelHandlerContext) {
        var out = context.channel.allocator.buffer(capacity: reply.bytes.count + 256)
        out.writeString("HTTP/1.1 \(reply.status.code) \(reply.status.reasonPhrase)\r\n")
        for field in reply.headers {
            out.writeString(field.name.rawName)
            out.writeStaticString(": ")
            out.writeString(field.value)
            out.writeStaticString("\r\n")
        }
        out.writeString("Content-Length: \(reply.bytes.count)\r\nDate: \(HTTPDate.now())\r\nServer: \(reads.serverName)\r\n\r\n")
        out.writeBytes(reply.bytes)
        guard closing else { return encoder.writeAndFlush(NIOAny(IOData.byteBuffer(out)), promise: nil) }
        // As the router does for `Connection: close`: answer, then close.
        let channel = context.channel
        encoder.writeAndFlush(NIOAny(IOData.byteBuffer(out))).whenComplete { _ in channel.close(promise: nil) }
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
