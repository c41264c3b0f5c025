import GRPCCore
import GRPCNIOTransportHTTP2
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import Logging
import NIOCertificateReloading
import ServiceLifecycle

/// The gRPC server of `google.firestore.v1.Firestore` (plaintext HTTP/2, as Firestore's emulator is, or TLS with
/// the HTTP port's certificate), run as one
/// service of the server's group: it stops accepting calls at graceful shutdown, and open Listen streams end
/// when the change feed closes its connections.
public struct FirestoreServer: Service {
    let host: String
    let port: Int
    let service: FirestoreService
    /// The certificate to serve TLS with, reloaded with the HTTP port's; nil for plaintext.
    let tls: (any CertificateReloader)?
    let onListening: @Sendable (Int) async -> Void

    /// Makes the server; `onListening` receives the bound port (`port` 0 picks a free one).
    public init(host: String, port: Int, database: Database, feed: ChangeFeed, autoIDs: AutoIDs,
                authenticate: @escaping FirestoreAuthenticate, tls: (any CertificateReloader)? = nil, logger: Logger,
                onListening: @escaping @Sendable (Int) async -> Void = { _ in }) {
        self.host = host
        self.port = port
        self.service = FirestoreService(database: database, feed: feed, authenticate: authenticate, autoIDs: autoIDs,
                                        logger: logger)
        self.onListening = onListening
        self.tls = tls
    }

    public func run() async throws {
        var config = HTTP2ServerTransport.Posix.Config.defaults
        // Firestore accepts requests up to 10 MiB; a larger one fails in the transport as RESOURCE_EXHAUSTED.
        config.rpc.maxRequestPayloadSize = Limits.maxRequestBody
        let transport = HTTP2ServerTransport.Posix(address: Self.address(host: host, port: port),
                                                   transportSecurity: try tls.map { try .tls(certificateReloader: $0) } ?? .plaintext,
                                                   config: config)
        let server = GRPCServer(transport: transport, services: [service])
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await server.serve() }
                let address = try await transport.listeningAddress
                if let bound = address.ipv4?.port ?? address.ipv6?.port { await onListening(bound) }
            }
        } onGracefulShutdown: {
            server.beginGracefulShutdown()
        }
    }

    static func address(host: String, port: Int) -> GRPCNIOTransportCore.SocketAddress {
        switch host {
        case "localhost": return .ipv4(host: "127.0.0.1", port: port)
        case "", "*": return .ipv4(host: "0.0.0.0", port: port)
        default:
            let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            return bare.contains(":") ? .ipv6(host: bare, port: port) : .ipv4(host: bare, port: port)
        }
    }
}
