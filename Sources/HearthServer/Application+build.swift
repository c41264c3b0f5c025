import HearthAuth
import HearthCore
import HearthEngine
import HearthStore
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The parts of a running Hearth server that callers (the CLI, the tests) may need.
public struct HearthServices: Sendable {
    /// The database engine.
    public let database: Database
    /// The admin key in force.
    public let adminKey: AdminKey
    /// The server's metrics.
    public let metrics: ServerMetrics
}

/// Builds the Hearth application: storage, engine, routes and middleware. `hearth serve` and the tests both
/// call this; nothing else assembles a server. `onServerRunning` receives the bound port.
public func buildApplication(
    configuration: ServerConfiguration,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> (some ApplicationProtocol, HearthServices) {
    var logger = Logger(label: "hearth") { label in HearthLogHandler(label: label) }
    logger.logLevel = configuration.logLevel

    var storeConfiguration = Store.Configuration(dataDirectory: configuration.dataDirectory)
    storeConfiguration.synchronous = configuration.synchronous
    let store = try Store(configuration: storeConfiguration, logger: logger)
    let database = Database(store: store, logger: logger)
    let adminKey = try AdminKey.loadOrCreate(dataDirectory: configuration.dataDirectory, configured: configuration.adminKey)
    let metrics = ServerMetrics()

    let router = Router(context: HearthRequestContext.self)
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: LogRequestsMiddleware(configuration.requestLogLevel))
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: AuthMiddleware(adminKey: adminKey))

    router.get("/healthz") { _, _ in jsonResponse(Array("{\"status\":\"ok\"}".utf8)) }
    router.get("/metrics") { _, _ in
        metrics.databaseSize.set(Double(store.sizeOnDisk()))
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
    }
    DocumentRoutes(database: database).register(on: router)
    QueryRoutes(database: database).register(on: router)

    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "hearth"),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger
    )
    app.addServices(StoreService(store: store, logger: logger))
    return (app, HearthServices(database: database, adminKey: adminKey, metrics: metrics))
}

/// Closes the store (finishing queued writes and checkpointing the WAL) after the HTTP server has stopped.
struct StoreService: Service {
    let store: Store
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        store.close()
        logger.info("store closed")
    }
}
