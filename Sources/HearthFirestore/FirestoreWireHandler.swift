import Foundation
import GRPCCore
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import Logging
import NIOCore
import NIOHPACK
import SwiftProtobuf
import Synchronization

/// gRPC over one HTTP/2 connection, the last handler of the connection's pipeline: `HTTP2ServerConnection` turns
/// the socket's bytes into the streams' requests and the answers into frames; this keeps each call's state in a
/// dictionary (no channel per stream) and gathers the length-prefixed request messages. An answer's frames are
/// gathered and written as one buffer when the read that asked for it, or the loop's work, is done.
/// Commit and BatchGetDocuments are called on the event loop and answered there (a completion that comes on
/// another thread, a commit's from the writer, hops back to the loop); Listen streams are served on the loop too
/// (`FirestoreWireHandler+Listen.swift`); every other call is handed to `GRPCServer`'s router as a stream, run
/// in a task, whose writes come to the loop and wait while the peer does not read (`WireOutbound`).
/// Used on its channel's loop only: other threads only hand it to that loop (`ReadyListens`, `Answer`).
final class FirestoreWireHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    typealias StreamID = UInt32

    /// The RPCs answered on the event loop, by `:path`; the rest go to the router.
    enum Method: Sendable {
        case commit, batchGet, listen

        static let byPath: [String: Method] = [
            "/google.firestore.v1.Firestore/Commit": .commit,
            "/google.firestore.v1.Firestore/BatchGetDocuments": .batchGet,
            "/google.firestore.v1.Firestore/Listen": .listen,
        ]
    }

    /// A call run in a task by the server's router: its request parts, its task and how to cancel it. Used only
    /// on the connection's loop.
    final class Routed: @unchecked Sendable {
        let requests: AsyncThrowingStream<RPCRequestPart<[UInt8]>, any Error>.Continuation
        let cancellation: ServerContext.RPCCancellationHandle
        var task: Task<Void, Never>?
        /// Request messages handed to the task (the methods it serves take one).
        var messages = 0
        /// Response messages written but not yet on the socket (counted by the writer, on its own thread); past
        /// `maxUnwritten` a write waits for its message to reach the socket.
        let unwritten = Atomic<Int>(0)

        init(requests: AsyncThrowingStream<RPCRequestPart<[UInt8]>, any Error>.Continuation,
             cancellation: ServerContext.RPCCancellationHandle) {
            self.requests = requests
            self.cancellation = cancellation
        }

        func cancel() {
            requests.finish(throwing: RPCError(code: .cancelled, message: "The client cancelled the call"))
            cancellation.cancel()
            task?.cancel()
        }
    }

    static let maxUnwritten = 16

    /// One stream's call, from its request's headers until its answer ends.
    struct Call {
        /// nil: handed to the router (`routed`).
        let method: Method?
        var routed: Routed?
        /// A Listen stream's state (`method` is `.listen`).
        var listen: WireListen?
        let authorization: String?
        /// Request bytes not yet gathered into a message.
        var pending: ByteBuffer?
        var messages: [ByteBuffer] = []
        /// The client has half-closed the stream.
        var requestEnded = false
        /// Response headers are written: the status goes in trailers, not in a trailers-only answer.
        var headersSent = false

        /// Request bytes held: a message not yet whole, and whole ones not yet taken.
        var buffered: Int { (pending?.readableBytes ?? 0) + messages.reduce(0) { $0 + $1.readableBytes } }

        /// The call ends before its answer: its task, or its feed connection, is let go.
        func cancel() {
            routed?.cancel()
            listen?.end()
        }
    }

    let service: FirestoreService
    let streamHandler: FirestoreWireServer.StreamHandler
    let logger: Logger
    var calls: [StreamID: Call] = [:]
    /// Request bytes the calls hold, all streams together (`Call.buffered`): past `maxBufferedRequestBytes` the
    /// call that brought more fails, so that one connection's unfinished requests stay bounded in memory.
    private var bufferedRequestBytes = 0
    static let maxBufferedRequestBytes = 4 * Limits.maxRequestBody
    /// The HTTP/2 protocol's state; nil until the handler is added.
    var connection: HTTP2ServerConnection!
    /// Bytes read and not yet a whole frame.
    private var inbound: ByteBuffer?
    /// Listen streams whose events were left queued because the connection was behind: taken again when it
    /// catches up.
    var blockedListens: Set<StreamID> = []
    private(set) var context: ChannelHandlerContext?
    private(set) var channel: (any Channel)?
    /// Set while a pass of `ReadyListens` has written this connection's streams and not yet flushed it.
    var drainedInPass = false
    /// Listen streams with events to write, handed over from the feed's threads to this loop.
    let readyListensRegistry: PerEventLoop<ReadyListens>
    private(set) var readyListens: ReadyListens?
    private var peer = ""
    /// Between a read and its `channelReadComplete`, where answers written are flushed together.
    private var reading = false
    private var quiescing = false
    /// The peer broke the protocol: GOAWAY is sent, the connection closing, and nothing more is read.
    private var failed = false
    /// The last `authorization` value of this connection that was the admin key: the same bytes again need no
    /// new hash (the key does not change while the server runs), as `InlineAnswers` does over HTTP.
    private var adminAuthorization: String?
    let timeouts: FirestoreWireServer.Timeouts
    /// When the connection opened, and when it last had no call open: the preface and idle timeouts count from
    /// them. One timer per connection looks at them (`checkTimeouts`).
    private var opened = NIODeadline.now()
    private var idleSince = NIODeadline.now()
    private var timeoutCheck: Scheduled<Void>?

    /// SETTINGS and PING acknowledgements a peer that does not read may leave unwritten before it is let go.
    static let maxUnreadControlFrames = 10_000

    init(service: FirestoreService, streamHandler: @escaping FirestoreWireServer.StreamHandler,
         readyListens: PerEventLoop<ReadyListens>, timeouts: FirestoreWireServer.Timeouts, logger: Logger) {
        self.service = service
        self.timeouts = timeouts
        self.readyListensRegistry = readyListens
        self.streamHandler = streamHandler
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        channel = context.channel
        readyListens = readyListensRegistry(context.eventLoop)
        peer = Self.peer(context.channel.remoteAddress)
        connection = HTTP2ServerConnection(allocator: context.channel.allocator)
    }

    func channelActive(context: ChannelHandlerContext) {
        (opened, idleSince) = (.now(), .now())
        checkTimeouts()
        endWrite() // the server's SETTINGS
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        channel = nil
        timeoutCheck?.cancel()
        for call in calls.values { call.cancel() }
        calls.removeAll()
        bufferedRequestBytes = 0
        connection.close()
    }

    /// The peer as grpc-swift names it (`ipv4:127.0.0.1:5000`), which transactions are counted by.
    static func peer(_ address: SocketAddress?) -> String {
        switch address {
        case .v4(let a)?: return "ipv4:\(a.host):\(address?.port ?? 0)"
        case .v6(let a)?: return "ipv6:[\(a.host)]:\(address?.port ?? 0)"
        case .unixDomainSocket?: return "unix:\(address?.pathname ?? "")"
        case nil: return "unknown"
        }
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        reading = true
        var bytes = unwrapInboundIn(data)
        if inbound == nil { inbound = bytes } else { inbound!.writeBuffer(&bytes) }
        do {
            while let event = try connection.next(from: &inbound!) { handle(event) }
        } catch {
            logger.debug("gRPC connection ended", metadata: ["peer": "\(peer)", "reason": "\(error.message)"])
            return failConnection(error)
        }
        if inbound!.readableBytes == 0 { inbound = nil } else { inbound!.discardReadBytes() }
        if listensMayWrite { resumeListens() } // the peer's WINDOW_UPDATE frames may have let waiting responses go
        if context.channel.isWritable {
            connection.controlFramesAnswered = 0
        } else if connection.controlFramesAnswered > Self.maxUnreadControlFrames {
            failConnection(HTTP2.ConnectionError(code: .enhanceYourCalm, message: "the peer does not read the acknowledgements of its frames"))
        }
    }

    private func handle(_ event: HTTP2ServerConnection.Event) {
        switch event {
        case .request(let id, let headers, let endStream):
            begin(id, headers)
            if endStream { requestEnded(id) }
        case .data(let id, let bytes, let endStream):
            if bytes.readableBytes > 0 { received(id, bytes) }
            if endStream { requestEnded(id) }
        case .reset(let id):
            removeCall(id)?.cancel()
            closeIfQuiet()
        case .goAway:
            quiescing = true
            closeIfQuiet()
        }
    }

    /// A fault of the connection: GOAWAY naming it, then the connection closes.
    private func failConnection(_ error: HTTP2.ConnectionError) {
        failed = true
        connection.goAway(error.code, error.message)
        reading = false
        endWrite()
        context?.close(promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        reading = false
        endWrite()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            goAwayGracefully()
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if listensMayWrite { resumeListens() }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// A new stream's request headers: refused at once (HTTP status, or gRPC trailers-only) if they cannot be
    /// a Firestore call this transport serves.
    private func begin(_ id: StreamID, _ headers: HPACKHeaders) {
        var method: String?, path: String?, contentType: String?, encoding: String?, authorization: String?
        for (name, value, _) in headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case "content-type": contentType = value
            case "grpc-encoding": encoding = value
            case "authorization": authorization = authorization.map { $0 + ", " + value } ?? value
            default: break
            }
        }
        guard method == "POST" else { return refuseHTTP(id, status: "405") }
        guard let contentType, contentType.hasPrefix("application/grpc") else { return refuseHTTP(id, status: "415") }
        guard let path else { return refuseHTTP(id, status: "400") }
        if let encoding, encoding != "identity" {
            return trailersOnly(id, RPCError(code: .unimplemented,
                                             message: "grpc-encoding \(encoding) is not supported; send uncompressed (identity) messages"))
        }
        switch Method.byPath[path] {
        case .listen?: startListen(id, authorization)
        case let known?: calls[id] = Call(method: known, authorization: authorization)
        case nil: route(id, path, headers)
        }
    }

    /// Starts a call the router answers, in a task: its request parts come from this handler as they arrive.
    private func route(_ id: StreamID, _ path: String, _ headers: HPACKHeaders) {
        guard let context else { return }
        let parts = path.dropFirst().split(separator: "/", maxSplits: 1)
        guard path.hasPrefix("/"), parts.count == 2 else {
            return trailersOnly(id, RPCError(code: .unimplemented, message: "\(path) is not a gRPC method"))
        }
        let descriptor = MethodDescriptor(fullyQualifiedService: String(parts[0]), method: String(parts[1]))
        var metadata = Metadata()
        for (name, value, _) in headers where !name.hasPrefix(":") {
            if name.hasSuffix("-bin") {
                metadata.addBinary(Array(Self.base64Decoded(value)), forKey: name)
            } else {
                metadata.addString(value, forKey: name)
            }
        }
        let (requests, continuation) = AsyncThrowingStream<RPCRequestPart<[UInt8]>, any Error>.makeStream()
        continuation.yield(.metadata(metadata))
        let routed = Routed(requests: continuation, cancellation: ServerContext.RPCCancellationHandle())
        calls[id] = Call(method: nil, routed: routed, authorization: nil)
        let outbound = WireOutbound(handler: NIOLoopBound(self, eventLoop: context.eventLoop), stream: id, routed: routed)
        let serverContext = ServerContext(descriptor: descriptor, remotePeer: peer,
                                          localPeer: Self.peer(context.channel.localAddress), cancellation: routed.cancellation)
        let stream = RPCStream(descriptor: descriptor, inbound: RPCAsyncSequence(wrapping: requests),
                               outbound: RPCWriter.Closable(wrapping: outbound))
        let streamHandler = streamHandler
        routed.task = Task { await streamHandler(stream, serverContext) }
    }

    static func base64Decoded(_ text: String) -> [UInt8] {
        var padded = text
        while padded.utf8.count % 4 != 0 { padded += "=" }
        return Array(Data(base64Encoded: padded) ?? Data())
    }

    /// Request bytes: gathered into length-prefixed messages; one over the size limit, or compressed, fails the
    /// call.
    private func received(_ id: StreamID, _ bytes: ByteBuffer) {
        guard var call = calls[id], !call.requestEnded else { return }
        let held = call.buffered
        if call.pending == nil { call.pending = bytes } else { var more = bytes; call.pending!.writeBuffer(&more) }
        while let pending = call.pending, pending.readableBytes >= 5 {
            let flag = pending.getInteger(at: pending.readerIndex, as: UInt8.self)!
            let length = Int(pending.getInteger(at: pending.readerIndex + 1, as: UInt32.self)!)
            if flag != 0 {
                return fail(id, RPCError(code: .internalError, message: "a compressed message arrived without grpc-encoding"))
            }
            if length > Limits.maxRequestBody {
                return fail(id, RPCError(code: .resourceExhausted,
                                         message: "The request message of \(length) bytes exceeds the limit of \(Limits.maxRequestBody) bytes"))
            }
            guard pending.readableBytes >= 5 + length else { break }
            if call.listen == nil, call.routed?.messages ?? call.messages.count > 0 {
                return fail(id, RPCError(code: .internalError, message: "The call takes one request message, and a second one came"))
            }
            if let routed = call.routed {
                routed.messages += 1
                routed.requests.yield(.message(pending.getBytes(at: pending.readerIndex + 5, length: length)!))
            } else {
                call.messages.append(pending.getSlice(at: pending.readerIndex + 5, length: length)!)
            }
            call.pending!.moveReaderIndex(forwardBy: 5 + length)
            if call.pending!.readableBytes == 0 { call.pending = nil }
        }
        let messages = call.listen != nil ? call.messages : []
        if call.listen != nil { call.messages = [] }
        bufferedRequestBytes += call.buffered - held
        calls[id] = call
        if bufferedRequestBytes > Self.maxBufferedRequestBytes {
            return fail(id, RPCError(code: .resourceExhausted, message: "The connection's unfinished requests exceed \(Self.maxBufferedRequestBytes) bytes"))
        }
        if !messages.isEmpty { listenRequests(id, messages) }
    }

    /// Forgets a call, and the request bytes it held.
    @discardableResult
    func removeCall(_ id: StreamID) -> Call? {
        let call = calls.removeValue(forKey: id)
        bufferedRequestBytes -= call?.buffered ?? 0
        if calls.isEmpty { idleSince = .now() }
        return call
    }

    /// No new streams, the open ones finish, then the connection closes: at graceful shutdown, and when idle.
    private func goAwayGracefully(_ reason: String = "") {
        quiescing = true
        connection.goAway(.noError, reason)
        endWrite()
    }

    /// Closes a connection that has not sent HTTP/2's preface within the preface timeout (without a word: it
    /// speaks no HTTP/2), and sends GOAWAY to one that has had no call for the idle timeout, as gRPC servers do
    /// (`max_connection_idle`; clients open a new connection for their next call). Else looks again when either
    /// could next be due.
    private func checkTimeouts() {
        guard let context, !quiescing else { return }
        let now = NIODeadline.now()
        var next = now + timeouts.idle
        if !connection.settingsReceived {
            let due = opened + timeouts.preface
            if due <= now {
                logger.debug("gRPC connection closed: no HTTP/2 preface", metadata: ["peer": "\(peer)"])
                return context.close(promise: nil)
            }
            next = min(next, due)
        }
        if calls.isEmpty {
            let due = idleSince + timeouts.idle
            if due <= now { return goAwayGracefully("idle") }
            next = min(next, due)
        }
        timeoutCheck = context.eventLoop.scheduleTask(deadline: next) { [self] in checkTimeouts() }
    }

    /// The request is complete: a unary call (and a server-streaming one) has exactly one message.
    private func requestEnded(_ id: StreamID) {
        guard var call = calls[id], !call.requestEnded else { return }
        call.requestEnded = true
        calls[id] = call
        if call.listen != nil {
            // The client half-closed: the stream ends, as it ends when the feed ends the connection.
            return endListen(id, call.pending == nil ? nil : RPCError(code: .internalError, message: "The request ended inside a message"))
        }
        if let routed = call.routed {
            if call.pending != nil {
                routed.requests.finish(throwing: RPCError(code: .internalError, message: "The request ended inside a message"))
            } else {
                routed.requests.finish()
            }
            return
        }
        guard let method = call.method else { return }
        guard call.pending == nil, call.messages.count == 1 else {
            removeCall(id)
            let what = call.pending != nil ? "ended inside a message" : "had \(call.messages.count) messages, not one"
            return trailersOnly(id, RPCError(code: .internalError, message: "The request \(what)"))
        }
        let caller: FirestoreCaller
        if let authorization = call.authorization, authorization == adminAuthorization {
            caller = FirestoreCaller(identity: .admin)
        } else {
            do {
                caller = try service.authenticate(call.authorization)
            } catch {
                removeCall(id)
                return trailersOnly(id, FirestoreStatus.rpcError(error, logger: logger))
            }
            if caller.identity.isAdmin, caller.session == nil, caller.expires == nil { adminAuthorization = call.authorization }
        }
        dispatch(id, method, call.messages[0], caller)
    }

    private func dispatch(_ id: StreamID, _ method: Method, _ bytes: ByteBuffer, _ caller: FirestoreCaller) {
        guard let context else { return }
        let answer = Answer(handler: NIOLoopBound(self, eventLoop: context.eventLoop), stream: id, logger: logger)
        switch method {
        case .commit:
            guard let request = decode(id, Google_Firestore_V1_CommitRequest.self, bytes) else { return }
            service.commit(request, caller) { result in answer.finish(result.map { [$0] }) }
        case .listen:
            break
        case .batchGet:
            guard let request = decode(id, Google_Firestore_V1_BatchGetDocumentsRequest.self, bytes) else { return }
            service.batchGet(request, caller, peer: peer, send: { answer.send($0) }, completion: { answer.finish($0.map { [Google_Firestore_V1_BatchGetDocumentsResponse]() }) })
        }
    }

    private func decode<Request: SwiftProtobuf.Message>(_ id: StreamID, _ type: Request.Type, _ bytes: ByteBuffer) -> Request? {
        do {
            return try Request(serializedBytes: Array(bytes.readableBytesView))
        } catch {
            removeCall(id)
            trailersOnly(id, RPCError(code: .invalidArgument, message: "Can't deserialize to message of type \(Request.self)."))
            return nil
        }
    }

    // MARK: Writing

    /// Where an RPC's answer goes, from any thread: to its stream, on the connection's loop.
    struct Answer: Sendable {
        let handler: NIOLoopBound<FirestoreWireHandler>
        let stream: StreamID
        let logger: Logger

        func send(_ message: some SwiftProtobuf.Message & Sendable) {
            onLoop { $0.sendMessage(stream, message) }
        }

        func finish<Response: SwiftProtobuf.Message & Sendable>(_ result: Result<[Response], any Error>) {
            let logger = logger
            onLoop { handler in
                switch result {
                case .success(let messages):
                    for message in messages { handler.sendMessage(stream, message) }
                    handler.finish(stream, nil)
                case .failure(let error):
                    handler.finish(stream, FirestoreStatus.rpcError(error, logger: logger))
                }
            }
        }

        private func onLoop(_ body: @escaping @Sendable (FirestoreWireHandler) -> Void) {
            let loop = handler.eventLoop
            if loop.inEventLoop {
                body(handler.value)
            } else {
                loop.execute { body(handler.value) }
            }
        }
    }

    /// The writer of a routed call's response parts: each goes to the connection's loop in order, without waiting
    /// for it, unless `maxUnwritten` of the call's messages are not yet on the socket (a listener that does not
    /// read): then the write waits until its message is.
    struct WireOutbound: ClosableRPCWriterProtocol {
        typealias Element = RPCResponsePart<[UInt8]>
        let handler: NIOLoopBound<FirestoreWireHandler>
        let stream: StreamID
        let routed: Routed

        func write(_ part: RPCResponsePart<[UInt8]>) async throws {
            let (handler, stream) = (handler, stream)
            guard case .message = part else {
                return handler.eventLoop.execute { handler.value.write(stream, part, routed: nil) }
            }
            let routed = routed
            if routed.unwritten.add(1, ordering: .relaxed).oldValue < FirestoreWireHandler.maxUnwritten {
                handler.eventLoop.execute { handler.value.write(stream, part, routed: routed) }
            } else {
                let written = handler.eventLoop.makePromise(of: Void.self)
                handler.eventLoop.execute { handler.value.write(stream, part, routed: routed, written: written) }
                try await written.futureResult.get()
            }
        }

        func write(contentsOf parts: some Sequence<RPCResponsePart<[UInt8]>>) async throws {
            for part in parts { try await write(part) }
        }

        func finish() async {}

        func finish(throwing error: any Error) async {
            let (handler, stream) = (handler, stream)
            handler.eventLoop.execute {
                handler.value.finish(stream, RPCError(code: .internalError, message: "The call failed"))
            }
        }
    }

    /// Writes a routed call's part; `routed` counts a message until it is on the socket, `written` learns when it is.
    private func write(_ id: StreamID, _ part: RPCResponsePart<[UInt8]>, routed counter: Routed?,
                       written: EventLoopPromise<Void>? = nil) {
        guard let context, var call = calls[id], call.routed != nil else {
            counter?.unwritten.subtract(1, ordering: .relaxed)
            written?.fail(RPCError(code: .cancelled, message: "The call has ended"))
            return
        }
        switch part {
        case .metadata(let metadata):
            guard !call.headersSent else { return }
            call.headersSent = true
            calls[id] = call
            var block = Self.responseHeaders
            HTTP2.appendLiterals(Self.fields(metadata), to: &block)
            connection.writeHeaders(id, block)
            endWrite()
        case .message(let bytes):
            sendHeaders(id)
            let promise = written ?? context.eventLoop.makePromise(of: Void.self)
            if let counter { promise.futureResult.whenComplete { _ in counter.unwritten.subtract(1, ordering: .relaxed) } }
            connection.writeData(id, Self.message(bytes, allocator: context.channel.allocator), promise: promise)
            scheduleFlush()
        case .status(let status, let metadata):
            removeCall(id)
            var block = Self.trailers(code: status.code.rawValue, message: status.message, afterHeaders: call.headersSent)
            HTTP2.appendLiterals(Self.fields(metadata), to: &block)
            connection.writeTrailers(id, block)
            endWrite()
        }
    }

    /// Flushes once after the messages a task hands over in one go: the flush runs after the loop's queued work.
    private var flushScheduled = false
    private func scheduleFlush() {
        guard !reading, !flushScheduled, let context else { return }
        flushScheduled = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            handler.value.flushScheduled = false
            handler.value.endWrite()
        }
    }

    /// A call's metadata as header fields (binary values base64-encoded, names lowercase as HTTP/2 requires).
    private static func fields(_ metadata: Metadata) -> [(String, String)] {
        metadata.map { key, value in
            switch value {
            case .string(let text): (key.lowercased(), text)
            case .binary(let bytes): (key.lowercased(), Data(bytes).base64EncodedString())
            }
        }
    }

    /// A gRPC message on the wire: uncompressed, length-prefixed.
    static func message(_ bytes: [UInt8], allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 5 + bytes.count)
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt32(bytes.count))
        buffer.writeBytes(bytes)
        return buffer
    }

    private func sendMessage(_ id: StreamID, _ message: some SwiftProtobuf.Message) {
        guard calls[id] != nil, let context else { return }
        let bytes: [UInt8]
        do {
            bytes = try message.serializedBytes()
        } catch {
            return finish(id, FirestoreStatus.rpcError(error, logger: logger))
        }
        sendHeaders(id)
        connection.writeData(id, Self.message(bytes, allocator: context.channel.allocator), promise: nil)
    }

    func sendHeaders(_ id: StreamID) {
        guard var call = calls[id], !call.headersSent else { return }
        call.headersSent = true
        calls[id] = call
        connection.writeHeaders(id, Self.responseHeaders)
    }

    /// Ends a call with its status: in trailers after its messages, or trailers-only when nothing was sent.
    func finish(_ id: StreamID, _ error: RPCError?) {
        guard let call = removeCall(id) else { return }
        connection.writeTrailers(id, error == nil && call.headersSent ? Self.okTrailers : Self.trailers(error, afterHeaders: call.headersSent))
        endWrite()
    }

    func trailersOnly(_ id: StreamID, _ error: RPCError) {
        connection.writeTrailers(id, Self.trailers(error, afterHeaders: false))
        endWrite()
    }

    /// Ends a call whose request failed: its task or feed connection is let go, and its status goes in
    /// trailers, after the response headers when a streaming call has sent them.
    func fail(_ id: StreamID, _ error: RPCError) {
        guard let call = calls[id] else { return trailersOnly(id, error) }
        call.cancel()
        finish(id, error)
    }

    /// A request that is not gRPC at all: answered with an HTTP status.
    private func refuseHTTP(_ id: StreamID, status: String) {
        connection.writeTrailers(id, HTTP2.headerBlock([(":status", status)]))
        endWrite()
    }

    /// Writes and flushes the frames made so far, unless a read is under way (its `channelReadComplete` writes
    /// everything it answered, in one buffer).
    func endWrite() {
        if !reading { writeOutput() }
        closeIfQuiet()
    }

    private func writeOutput() {
        guard let context, let (bytes, promises) = connection.takeOutput() else { return }
        let promise = promises.isEmpty ? nil : context.eventLoop.makePromise(of: Void.self)
        if let promise { for waiting in promises { promise.futureResult.cascade(to: waiting) } }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: promise)
    }

    private func closeIfQuiet() {
        guard quiescing, calls.isEmpty, let context else { return }
        writeOutput()
        context.close(promise: nil)
    }

    static let responseHeaders = HTTP2.headerBlock([(":status", "200"), ("content-type", "application/grpc")])
    /// The trailers of a call that succeeded after its messages, made once.
    static let okTrailers = HTTP2.headerBlock([("grpc-status", "0")])

    /// A call's status as the header block that ends it: trailers after its response headers, or the whole
    /// answer (trailers-only) when none were sent.
    static func trailers(_ error: RPCError?, afterHeaders: Bool) -> ByteBuffer {
        trailers(code: error?.code.rawValue ?? 0, message: error?.message ?? "", afterHeaders: afterHeaders)
    }

    static func trailers(code: Int, message: String, afterHeaders: Bool) -> ByteBuffer {
        var block = afterHeaders ? ByteBuffer() : responseHeaders
        HTTP2.appendLiterals([("grpc-status", String(code))], to: &block)
        if !message.isEmpty { HTTP2.appendLiterals([("grpc-message", percentEncoded(message))], to: &block) }
        return block
    }

    /// `grpc-message` is percent-encoded UTF-8: bytes outside printable ASCII, and `%`, as `%XX`.
    static func percentEncoded(_ message: String) -> String {
        var out = ""
        for byte in message.utf8 {
            if byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
