import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A loopback HTTP server for tests that play a remote service: each request, collected whole, is handed to
/// `handle`, whose answer is written back. Plain HTTP/1.1, or HTTP/2 over TLS (ALPN `h2`) with a test
/// certificate, as APNs speaks it.
public final class TestHTTPEndpoint: Sendable {
    /// One request as it arrived.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        /// Header names in lower case.
        public var headers: [String: String]
        public var body: [UInt8]
        /// `HTTP/2.0` or `HTTP/1.1`.
        public var version: String
    }

    /// One answer.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]

        public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    public let port: Int
    let channel: any Channel
    let log: RequestLog

    /// Every request answered so far, in order.
    public var received: [Request] { log.requests.withLock { $0 } }

    final class RequestLog: Sendable {
        let requests = Mutex<[Request]>([])
    }

    /// Starts listening on 127.0.0.1 (a free port); with `tls`, over TLS with that certificate, HTTP/2 for a
    /// client that offers it (ALPN) and HTTP/1.1 for one that does not.
    public static func start(tls: TestCertificate? = nil,
                             handle answer: @escaping @Sendable (Request) -> Answer) async throws -> TestHTTPEndpoint {
        let log = RequestLog()
        let handle: @Sendable (Request) -> Answer = { request in
            log.requests.withLock { $0.append(request) }
            return answer(request)
        }
        let context: NIOSSLContext? = try tls.map { pair in
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(pair.certificate).map { .certificate($0) },
                privateKey: .file(pair.key))
            configuration.applicationProtocols = ["h2", "http/1.1"]
            return try NIOSSLContext(configuration: configuration)
        }
        @Sendable func http1(_ channel: any Channel) -> EventLoopFuture<Void> {
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(CollectingHandler(handle: handle))
            }
        }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard let context else { return http1(channel) }
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                            mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
                        ) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandlers([
                                    HTTP2FramePayloadToHTTP1ServerCodec(), CollectingHandler(handle: handle),
                                ])
                            }
                        }
                    }
                }, http1ChannelConfigurator: http1)
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TestHTTPEndpoint(port: channel.localAddress?.port ?? 0, channel: channel, log: log)
    }

    init(port: Int, channel: any Channel, log: RequestLog) {
        self.log = log
        self.port = port
        self.channel = channel
    }

    /// Stops listening.
    public func stop() async {
        try? await channel.close()
    }
}

/// Collects one request (head and body) and writes the endpoint's answer.
final class CollectingHandler: ChannelInboundHandler, @unchecked Sendable {  // used on its channel's event loop only
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let handle: @Sendable (TestHTTPEndpoint.Request) -> TestHTTPEndpoint.Answer
    var head: HTTPRequestHead?
    var body: [UInt8] = []

    init(handle: @escaping @Sendable (TestHTTPEndpoint.Request) -> TestHTTPEndpoint.Answer) {
        self.handle = handle
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = []
        case .body(let buffer):
            body += buffer.readableBytesView
        case .end:
            guard let head else { return }
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            let version = "HTTP/\(head.version.major).\(head.version.minor)"
            let answer = handle(.init(method: head.method.rawValue, path: head.uri, headers: headers, body: body, version: version))
            var responseHeaders = HTTPHeaders(answer.headers.map { ($0.key, $0.value) })
            responseHeaders.replaceOrAdd(name: "content-length", value: String(answer.body.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version,
                                                                  status: HTTPResponseStatus(statusCode: answer.status),
                                                                  headers: responseHeaders))), promise: nil)
            if !answer.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: answer.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            self.head = nil
        }
    }
}
