import HearthCore
import NIOCore
import NIOHTTP1
import HTTPTypes

/// Holds an HTTP/1 connection to its timeouts (`ConnectionConfiguration`), answers what the request decoder
/// refuses, and frames answers to HTTP/1.0 requests as HTTP/1.0.
///
/// It sits right behind the request decoder (and the WebSocket upgrade handler, until a first plain request
/// replaces that one with the HTTP handlers, which come behind it), so it sees every request part, every
/// error of the decoder and every routed answer; `InlineAnswerHandler` tells it of the answers it writes
/// itself. Without it a decoder error went nowhere before a connection's first request (the upgrade handler
/// passes it on to no one), and a connection that sent half a head was held open for good.
///
/// What it decides lives in `ConnectionState`; this class only carries it out. A malformed request is
/// answered `400` (`431` for a head over `Limits`), in the one error shape, once the answers owed before it
/// are out; a head or body too slow is answered `408`; an idle connection is closed without a word. Each
/// closes the connection. One timer per connection looks at it, never less often than the shortest timeout.
///
/// Since every answer passes here, or asks here how to frame itself, this is also where each gets its CORS
/// headers (`CORSPolicy`), for the `Origin` of the request it answers.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var state: ConnectionState<ContinuousClock>
    /// The origins allowed to call from a browser; nil adds no CORS headers.
    private let cors: CORSPolicy?
    private var timer: Scheduled<Void>?
    /// This handler's place in the pipeline, for answers written on behalf of `InlineAnswerHandler`.
    private var context: ChannelHandlerContext?
    /// The refusal of a malformed request that waits for the answers owed before it.
    private var refusal: JSONReply?
    /// Whether a refusal has been written: nothing else may be answered, and nothing more is read.
    private var refused = false

    /// How long a refused connection keeps reading (and dropping) what the client still sends before it
    /// closes: closing with unread bytes resets the connection, which may destroy the answer in flight.
    static let lingerAfterRefusal: Duration = .seconds(2)

    init(configuration: ConnectionConfiguration, cors: CORSPolicy? = nil) {
        state = ConnectionState(configuration: configuration, clock: ContinuousClock())
        self.cors = cors
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { startTimer(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        startTimer(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Closing: what still comes is answered by no one (and a body refused here must not reach a route).
        if state.isClosing { return }
        switch unwrapInboundIn(data) {
        case .head(var head):
            let http10 = head.version == .http1_0
            let closes = !head.isKeepAlive
            state.receivedHead(.init(http10: http10, closes: closes, origin: cors == nil ? nil : head.headers["origin"].first))
            if http10, closes, head.headers["connection"].first?.lowercased() != "close" {
                // Both request paths close after the answer to a request that says `Connection: close`.
                head.headers.replaceOrAdd(name: "Connection", value: "close")
                return context.fireChannelRead(wrapInboundOut(.head(head)))
            }
        case .body:
            state.receivedBody()
        case .end:
            state.receivedEnd()
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        state.readCompleted()
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        state.writabilityChanged(writable: context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError {
            let abandoning = state.isReceivingBody
            switch state.malformed() {
            case .refuseNow(let framing): refuse(malformedRequestReply(error), framing, abandoning: abandoning, context: context)
            case .afterOwedAnswers: refusal = malformedRequestReply(error)
            case .ignore: break
            }
            return
        }
        // The decoder reports every later read after its error; the refusal has been decided already.
        if case ByteToMessageDecoderError.dataReceivedInErrorState = error { return }
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, state.isIdle {
            // Shutting down: a connection with nothing under way goes now, even before its first request
            // (when no other handler would hear of the shutdown).
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
        if case .upgradeComplete = event as? HTTPServerUpgradeEvents {
            // A WebSocket now: HTTP's timeouts end here; the listen protocol has its heartbeat.
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    // MARK: Answers

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if refused {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200:
            guard let framing = state.answerBegins(), framing.http10 || framing.closes || cors != nil else { break }
            for field in crossOriginFields(framing, responseNames: head.headers.map(\.name)) {
                head.headers.add(name: field.name, value: field.value)
            }
            if framing.http10 || framing.closes {
                head.version = framing.http10 ? .http1_0 : .http1_1
                // HTTP/1.0 cannot frame a body of unknown length except by closing the connection after it.
                if framing.http10, !framing.closes, !head.headers.contains(name: "content-length"),
                   head.status != .noContent, head.status != .notModified {
                    state.closesAfterAnswer()
                }
                head.headers.replaceOrAdd(name: "Connection", value: state.owed.first?.closes == true ? "close" : "keep-alive")
            }
            return context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .head, .body:
            break
        case .end:
            let abandoning = state.isReceivingBody
            switch state.answerEnded() {
            case .keepOpen:
                break
            case .close:
                let written = promise ?? context.eventLoop.makePromise()
                context.writeAndFlush(data, promise: written)
                let channel = context.channel
                written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                return
            case .refuseMalformed(let framing):
                context.write(data, promise: promise)
                return refuse(refusal, framing, abandoning: abandoning, context: context)
            }
        }
        context.write(data, promise: promise)
    }

    /// How the next answer is framed: `InlineAnswerHandler` asks before it writes its own bytes.
    var nextAnswer: ConnectionState<ContinuousClock>.Framing? {
        state.owed.first
    }

    /// The CORS headers of the answer framed so (none without a policy).
    func crossOriginFields(_ framing: ConnectionState<ContinuousClock>.Framing?,
                           responseNames: some Sequence<String>) -> [(name: String, value: String)] {
        guard let cors else { return [] }
        return cors.answerFields(origin: framing?.origin, responseNames: responseNames)
    }

    /// An answer was written whole below the response encoder (by `InlineAnswerHandler`, which closes the
    /// connection itself after an answer that closes it).
    func answeredInline() {
        guard let context else { return }
        let abandoning = state.isReceivingBody
        guard case .refuseMalformed(let framing) = state.answerEnded() else { return }
        refuse(refusal, framing, abandoning: abandoning, context: context)
    }

    /// Answers a request refused here, then closes the connection once the client has had time to read it.
    /// `abandoning`: a request's body was arriving; the route or inline answer waiting for it is told it
    /// failed, since an input that just ends would pass for the body's end.
    private func refuse(_ reply: JSONReply?, _ framing: ConnectionState<ContinuousClock>.Framing, abandoning: Bool,
                        context: ChannelHandlerContext) {
        refused = true
        if abandoning {
            // At once: the end of the input (the client's, or the close after this answer) must not get there first.
            context.fireErrorCaught(HearthError.invalidArgument("the request was refused before its body ended"))
        }
        // The encoder is gone once a WebSocket upgrade is under way: HTTP cannot be answered any more.
        guard let reply, (try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)) != nil else {
            return context.close(promise: nil)
        }
        var headers = HTTPHeaders()
        for field in reply.headers { headers.add(name: field.name.rawName, value: field.value) }
        for field in crossOriginFields(framing, responseNames: []) { headers.add(name: field.name, value: field.value) }
        headers.add(name: "Content-Length", value: String(reply.bytes.count))
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Date", value: HTTPDate.now())
        headers.add(name: "Server", value: serverName)
        let status = HTTPResponseStatus(statusCode: reply.status.code, reasonPhrase: reply.status.reasonPhrase)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: framing.http10 ? .http1_0 : .http1_1, status: status,
                                                             headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: reply.bytes)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            // The client reads the answer and closes (then so does the channel); one that does not is cut off.
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: TimeAmount(Self.lingerAfterRefusal)) { channel.close(promise: nil) }
        }
    }

    // MARK: Time

    private func startTimer(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        schedule(at: .now + state.configuration.shortest, context: context)
    }

    private func schedule(at instant: ContinuousClock.Instant, context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(instant - .now)) { [self] in
            timer = nil
            timerFired(context: context)
        }
    }

    private func timerFired(context: ChannelHandlerContext) {
        // No encoder: a WebSocket upgrade is under way, and this handler is about to leave.
        guard (try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)) != nil else { return }
        let abandoning = state.isReceivingBody
        switch state.timerFired() {
        case .lookAgain(let instant):
            schedule(at: instant, context: context)
        case .close:
            context.close(promise: nil)
        case .requestTimeout(let framing, let head):
            let configuration = state.configuration
            let reply = requestTimeoutReply(head: head, after: head ? configuration.requestHeadTimeout : configuration.requestBodyTimeout)
            refuse(reply, framing, abandoning: abandoning, context: context)
        }
    }
}
