import Foundation
import HearthCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The HTTP/1.1 client that posts function events: keep-alive connections per endpoint address (plain or TLS),
/// each request written and its answer read by NIO's encoder and decoder. It does only what delivery needs
/// (a POST, its status and a bounded answer, no redirects), so an event costs a write and a read rather than a
/// general client's per-request URL parsing, tracing and state machines.
final class WebhookClient: Sendable {
    /// Why a post failed, described as delivery records it.
    enum Failure: Error, Sendable, CustomStringConvertible {
        case connect(String)
        case connectTimeout
        case noAnswer
        case closed
        case cut
        case tooLarge(Int)
        case tls(String)
        case failed(String)

        var description: String {
            switch self {
            case .connect(let why): return why.contains("refused") ? "connection refused" : "could not connect: \(why)"
            case .connectTimeout: return "the connection timed out"
            case .noAnswer: return "no answer within the timeout"
            case .closed: return "the connection closed before an answer"
            case .cut: return "the connection closed during the answer"
            case .tooLarge(let limit): return "the answer is larger than \(limit) bytes"
            case .tls(let why): return "TLS: \(why)"
            case .failed(let why): return why
            }
        }
    }

    /// Where an endpoint's requests go: its address, and the path and `host` header of each request.
    struct Target: Sendable {
        let host: String
        let port: Int
        let tls: Bool
        let path: String
        let hostHeader: String
        var key: String { "\(tls ? "s" : "")\(host):\(port)" }

        init(_ url: URL) {
            host = url.host ?? "localhost"
            tls = url.scheme?.lowercased() == "https"
            port = url.port ?? (tls ? 443 : 80)
            var path = url.path.isEmpty ? "/" : url.path
            if let query = url.query { path += "?" + query }
            self.path = path
            let name = host.contains(":") ? "[\(host)]" : host
            hostHeader = port == (tls ? 443 : 80) ? name : "\(name):\(port)"
        }
    }

    /// A connection, and the first error it met while no answer was awaited (a TLS handshake that failed
    /// before the request went out tears the pipeline down: the error is kept here for the request).
    struct Connection: Sendable {
        let channel: any Channel
        let early: NIOLockedValueBox<Failure?>
    }

    private struct Request: Sendable {
        let head: HTTPRequestHead
        let body: ByteBuffer
    }

    private struct State {
        var targets: [String: Target] = [:]
        var idle: [String: [Connection]] = [:]
        /// Every open connection, idle or not: `shutdown` closes them all.
        var open: [ObjectIdentifier: any Channel] = [:]
        var shutDown = false
    }

    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    /// Idle connections kept per address; more are closed once answered.
    private let keepIdle: Int
    private let state = NIOLockedValueBox(State())
    private let tlsContext: Result<NIOSSLContext, any Error>

    init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, connectTimeout: Duration, keepIdle: Int,
         trustRoots: [NIOSSLCertificate] = []) {
        self.group = group
        self.connectTimeout = .nanoseconds(Int64(connectTimeout.inSeconds * 1e9))
        self.keepIdle = max(1, keepIdle)
        var tls = TLSConfiguration.makeClientConfiguration()
        if !trustRoots.isEmpty { tls.additionalTrustRoots = [.certificates(trustRoots)] }
        tlsContext = Result { try NIOSSLContext(configuration: tls) }
    }

    /// Posts `body` with `headers` (each `name: value`, without line ends) to `url` and hands `completion` the
    /// status and up to `maxAnswerBytes` of the answer, once, on the connection's event loop: no task or
    /// continuation an exchange. A kept connection that turns out closed before any answer is replaced by a
    /// new one once (the request may then arrive twice: delivery is at least once anyway).
    func post(_ url: URL, headers: [(String, String)], body: [UInt8], timeout: Duration, maxAnswerBytes: Int,
              completion: @escaping @Sendable (Result<(status: Int, answer: ByteBuffer), any Error>) -> Void) {
        let target = target(for: url)
        var fields = HTTPHeaders()
        fields.reserveCapacity(headers.count + 2)
        fields.add(name: "host", value: target.hostHeader)
        for (name, value) in headers { fields.add(name: name, value: value) }
        fields.add(name: "content-length", value: String(body.count))
        let request = Request(head: HTTPRequestHead(version: .http1_1, method: .POST, uri: target.path, headers: fields),
                              body: ByteBuffer(bytes: body))
        let deadline = NIODeadline.now() + .nanoseconds(Int64(timeout.inSeconds * 1e9))
        let onNew: @Sendable () -> Void = { [self] in
            connect(target).whenComplete { [self] connected in
                switch connected {
                case .success(let connection):
                    exchange(request, on: connection, target, deadline: deadline, limit: maxAnswerBytes, completion: completion)
                case .failure(let error):
                    completion(.failure(error))
                }
            }
        }
        guard let connection = takeIdle(target) else { return onNew() }
        exchange(request, on: connection, target, deadline: deadline, limit: maxAnswerBytes) { [self] result in
            // The peer closed the kept connection as the request went out: once more on a new one.
            if case .failure(Failure.closed) = result, !state.withLockedValue({ $0.shutDown }) { return onNew() }
            completion(result)
        }
    }

    /// Posts as `post(_:headers:body:timeout:maxAnswerBytes:completion:)` does, for a caller that is a task.
    func post(_ url: URL, headers: [(String, String)], body: [UInt8], timeout: Duration,
              maxAnswerBytes: Int) async throws -> (status: Int, answer: ByteBuffer) {
        try await withCheckedThrowingContinuation { continuation in
            post(url, headers: headers, body: body, timeout: timeout, maxAnswerBytes: maxAnswerBytes) { continuation.resume(with: $0) }
        }
    }

    /// Closes every connection, idle or awaiting an answer (whose posts then fail); later posts fail.
    func shutdown() {
        let open = state.withLockedValue { state -> [any Channel] in
            state.shutDown = true
            state.idle = [:]
            defer { state.open = [:] }
            return Array(state.open.values)
        }
        for channel in open { channel.close(promise: nil) }
    }

    private func target(for url: URL) -> Target {
        let text = url.absoluteString
        if let known = state.withLockedValue({ $0.targets[text] }) { return known }
        let target = Target(url)
        state.withLockedValue { $0.targets[text] = target }
        return target
    }

    private func takeIdle(_ target: Target) -> Connection? {
        state.withLockedValue { state in
            while let connection = state.idle[target.key]?.popLast() {
                if connection.channel.isActive { return connection }
            }
            return nil
        }
    }

    private func release(_ connection: Connection, _ target: Target) {
        let kept = state.withLockedValue { state -> Bool in
            guard !state.shutDown, state.idle[target.key, default: []].count < keepIdle else { return false }
            state.idle[target.key, default: []].append(connection)
            return true
        }
        if !kept { connection.channel.close(promise: nil) }
    }

    /// A new connection to the target, counted among the open ones (which `shutdown` closes) until it closes.
    private func connect(_ target: Target) -> EventLoopFuture<Connection> {
        let loop = group.next()
        if state.withLockedValue({ $0.shutDown }) { return loop.makeFailedFuture(Failure.closed) }
        let ssl: NIOSSLContext?
        if target.tls {
            do { ssl = try tlsContext.get() } catch { return loop.makeFailedFuture(Failure.tls("\(error)")) }
        } else {
            ssl = nil
        }
        // An address is no server name (SNI): only a name is sent.
        let serverName = (try? SocketAddress(ipAddress: target.host, port: 0)) == nil ? target.host : nil
        let early = NIOLockedValueBox<Failure?>(nil)
        return ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let ssl {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: ssl, serverHostname: serverName))
                    }
                    try channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)))
                    try channel.pipeline.syncOperations.addHandler(WebhookAnswerHandler(early: early))
                }
            }
            .connect(host: target.host, port: target.port)
            .flatMapErrorThrowing { error -> any Channel in
                if let error = error as? ChannelError, case .connectTimeout = error { throw Failure.connectTimeout }
                throw Failure.connect("\(error)")
            }
            .flatMapThrowing { [self] channel -> Connection in
                let id = ObjectIdentifier(channel)
                let kept = state.withLockedValue { state -> Bool in
                    guard !state.shutDown else { return false }
                    state.open[id] = channel
                    return true
                }
                guard kept else {
                    channel.close(promise: nil)
                    throw Failure.closed
                }
                channel.closeFuture.whenComplete { [self] _ in _ = state.withLockedValue { $0.open.removeValue(forKey: id) } }
                return Connection(channel: channel, early: early)
            }
    }

    private func exchange(_ request: Request, on connection: Connection, _ target: Target, deadline: NIODeadline, limit: Int,
                          completion: @escaping @Sendable (Result<(status: Int, answer: ByteBuffer), any Error>) -> Void) {
        let channel = connection.channel
        let promise = channel.eventLoop.makePromise(of: WebhookAnswerHandler.Answer.self)
        promise.futureResult.whenComplete { [self] result in
            switch result {
            case .success(let answer):
                if answer.keepAlive { release(connection, target) } else { channel.close(promise: nil) }
                completion(.success((answer.status, answer.body)))
            case .failure(let error):
                completion(.failure(error))
            }
        }
        let send: @Sendable () -> Void = {
            do {
                let handler = try channel.pipeline.syncOperations.handler(type: WebhookAnswerHandler.self)
                handler.expect(promise, limit: limit, deadline: deadline, on: channel)
                channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
                channel.write(HTTPClientRequestPart.body(.byteBuffer(request.body)), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            } catch {
                promise.fail(connection.early.withLockedValue { $0 } ?? Failure.closed)
            }
        }
        if channel.eventLoop.inEventLoop { send() } else { channel.eventLoop.execute(send) }
    }
}

/// Reads one answer at a time on a webhook connection and completes its promise; closes the connection on a
/// timeout, an answer too large, or an error (a later request never reads an earlier one's leftovers).
private final class WebhookAnswerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    struct Answer: Sendable {
        var status: Int
        var body: ByteBuffer
        var keepAlive: Bool
    }

    private var promise: EventLoopPromise<Answer>?
    private var answer = Answer(status: 0, body: ByteBuffer(), keepAlive: false)
    private var headRead = false
    private var limit = 0
    private var timer: Scheduled<Void>?
    /// The first error seen while no answer was awaited.
    private let early: NIOLockedValueBox<WebhookClient.Failure?>

    init(early: NIOLockedValueBox<WebhookClient.Failure?>) { self.early = early }

    func expect(_ promise: EventLoopPromise<Answer>, limit: Int, deadline: NIODeadline, on channel: any Channel) {
        if let failure = early.withLockedValue({ $0 }) { return promise.fail(failure) }
        guard channel.isActive else { return promise.fail(WebhookClient.Failure.closed) }
        self.promise = promise
        self.limit = limit
        answer = Answer(status: 0, body: ByteBuffer(), keepAlive: false)
        headRead = false
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            handler.value.fail(WebhookClient.Failure.noAnswer)
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard promise != nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            headRead = true
            answer.status = Int(head.status.code)
            answer.keepAlive = head.isKeepAlive
        case .body(var part):
            guard answer.body.readableBytes + part.readableBytes <= limit else {
                fail(WebhookClient.Failure.tooLarge(limit))
                context.close(promise: nil)
                return
            }
            answer.body.writeBuffer(&part)
        case .end:
            timer?.cancel()
            timer = nil
            let done = promise
            promise = nil
            done?.succeed(answer)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(early.withLockedValue { $0 } ?? (headRead ? WebhookClient.Failure.cut : WebhookClient.Failure.closed))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let failure = error is NIOSSLError ? WebhookClient.Failure.tls("\(error)") : WebhookClient.Failure.failed("\(error)")
        if promise == nil { early.withLockedValue { $0 = $0 ?? failure } }
        fail(failure)
        context.close(promise: nil)
    }

    private func fail(_ error: any Error) {
        timer?.cancel()
        timer = nil
        let done = promise
        promise = nil
        done?.fail(error)
    }
}
