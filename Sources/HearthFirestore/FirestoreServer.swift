import GRPCCore
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import Logging
import NIOCertificateReloading
import NIOCore
import ServiceLifecycle

/// The gRPC server of `google.firestore.v1.Firestore` (plaintext HTTP/2, as Firestore's emulator is, or TLS with
/// the HTTP port's certificate), run as one
/// service of the server's group: it stops accepting calls at graceful shutdown, and open Listen streams end
/// when the change feed closes its connections.
public struct FirestoreServer: Service {
    let host: String
    let port: Int
    let service: FirestoreService
    let logger: Logger
    /// The certificate to serve TLS with, reloaded with the HTTP port's; nil for plaintext.
    let tls: (any CertificateReloader)?
    let timeouts: FirestoreWireServer.Timeouts
    let onListening: @Sendable (Int) async -> Void

    /// Makes the server; `onListening` receives the bound port (`port` 0 picks a free one).
    public init(host: String, port: Int, database: Database, feed: ChangeFeed, autoIDs: AutoIDs,
                authenticate: @escaping FirestoreAuthenticate, tls: (any CertificateReloader)? = nil,
                idleTimeout: Duration = .seconds(60), prefaceTimeout: Duration = .seconds(10), logger: Logger,
                onListening: @escaping @Sendable (Int) async -> Void = { _ in }) {
        self.host = host
        self.port = port
        self.service = FirestoreService(database: database, feed: feed, authenticate: authenticate, autoIDs: autoIDs,
                                        logger: logger)
        self.onListening = onListening
        self.tls = tls
        timeouts = .init(idle: .microseconds(idleTimeout.inMicroseconds), preface: .microseconds(prefaceTimeout.inMicroseconds))
        self.logger = logger
    }

    public func run() async throws {
        let server = GRPCServer(transport: FirestoreWireServer(host: host, port: port, service: service, tls: tls, timeouts: timeouts, logger: logger,
                                                               onListening: onListening), services: [service])
        try await withGracefulShutdownHandler { try await server.serve() } onGracefulShutdown: { server.beginGracefulShutdown() }
    }
}
