import GRPCCore
import HearthCore
import HearthEngine
import Logging
import NIOCertificateReloading
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL

/// Hearth's own gRPC transport under grpc-swift's `GRPCServer`: a listening socket whose connections run TLS
/// (ALPN `h2`) when configured, and `FirestoreWireHandler`, which speaks HTTP/2, answers Commit and
/// BatchGetDocuments and serves Listen streams in the connection's pipeline, and hands every other call to the
/// server's router as a stream.
final class FirestoreWireServer: ServerTransport, Sendable {
    typealias Bytes = [UInt8]
    typealias StreamHandler = @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void

    let host: String
    let port: Int
    let service: FirestoreService
    let tls: (any CertificateReloader)?
    let timeouts: Timeouts
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void
    private let group = MultiThreadedEventLoopGroup.singleton
    private let quiesce: ServerQuiescingHelper
    private let done: EventLoopPromise<Void>
    private let stopping = NIOLockedValueBox(false)
    private let readyListens = PerEventLoop { ReadyListens(eventLoop: $0) }

    /// How long a connection may stay without a call (as gRPC's `max_connection_idle`: GOAWAY, then closed), and
    /// how long a new one may take to send HTTP/2's preface (closed): the HTTP port's idle and request-head
    /// timeouts, so that a client cannot hold the port's connections without using them.
    struct Timeouts: Sendable {
        var idle: TimeAmount
        var preface: TimeAmount
    }

    init(host: String, port: Int, service: FirestoreService, tls: (any CertificateReloader)?, timeouts: Timeouts, logger: Logger,
         onListening: @escaping @Sendable (Int) async -> Void) {
        (self.host, self.port, self.service, self.tls, self.logger, self.onListening) = (host, port, service, tls, logger, onListening)
        self.timeouts = timeouts
        quiesce = ServerQuiescingHelper(group: group)
        done = group.next().makePromise(of: Void.self)
    }

    /// Serves until graceful shutdown (or cancellation), which sends GOAWAY on every connection and returns once
    /// their open calls have finished.
    func listen(streamHandler: @escaping StreamHandler) async throws {
        let sslContext = try tls.map { reloader in
            var configuration = try TLSConfiguration.makeServerConfiguration(certificateReloader: reloader)
            configuration.applicationProtocols = ["h2"]
            return try NIOSSLContext(configuration: configuration)
        }
        let (service, timeouts, logger, quiesce, readyListens) = (service, timeouts, logger, quiesce, readyListens)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext { try pipeline.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    try pipeline.addHandler(FirestoreWireHandler(service: service, streamHandler: streamHandler,
                                                                     readyListens: readyListens, timeouts: timeouts, logger: logger))
                }
            }
            .bind(host: Self.bindHost(host), port: port).get()
        if let bound = channel.localAddress?.port { await onListening(bound) }
        try await withTaskCancellationHandler { try await done.futureResult.get() } onCancel: { beginGracefulShutdown() }
    }

    func beginGracefulShutdown() {
        if stopping.withLockedValue({ let was = $0; $0 = true; return !was }) { quiesce.initiateShutdown(promise: done) }
    }

    static func bindHost(_ host: String) -> String {
        switch host {
        case "localhost": return "127.0.0.1"
        case "", "*": return "0.0.0.0"
        default: return host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        }
    }
}
