import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HearthFirestore
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import Prometheus
import HearthRules

/// Builds the Hearth server: storage, engine, routes and middleware, and the services that run them, as one
/// service to run (in a `ServiceGroup`, which stops it gracefully). `hearth serve` and the tests both call
/// this and run what it returns; nothing else assembles a server. `onServerRunning` receives the bound port, and
/// `onGRPCRunning` the gRPC service's when `configuration.grpcPort` is set.
public func buildApplication(
    configuration: ServerConfiguration,
    onGRPCRunning: @escaping @Sendable (Int) async -> Void = { _ in },
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> (server: some Service, services: HearthServices) {
    var logger = Logger(label: "hearth") { label in
        configuration.logHandlerFactory?(label) ?? HearthLogHandler(label: label)
    }
    logger.logLevel = configuration.logLevel

    var storageConfiguration = configuration.storage
    // One server per data folder, and no `hearth import` while it runs.
    storageConfiguration.dataFolderOwner = "hearth serve"
    if let file = configuration.indexesFile {
        (storageConfiguration.compositeIndexes, storageConfiguration.fieldOverrides) = try loadIndexFile(file)
        logger.info("index file loaded", metadata: ["file": "\(file)", "composite indexes": "\(storageConfiguration.compositeIndexes.count)",
                                                    "field overrides": "\(storageConfiguration.fieldOverrides.count)"])
    }
    let rulesProgram = try compileRules(configuration)
    let accountMail = try AccountsAssembly.accountMail(configuration, logger: logger)
    // A certificate that does not load stops the server before it opens anything, with the file named.
    let tls = try configuration.tls.map { files throws(TLSStartupError) in try ServerTLS(files: files) }
    let functionsFile = try loadFunctions(configuration)
    let functionsInForce = FunctionsInForce()
    let storage = try StorageBackend.open(storageConfiguration, functions: functionsInForce, logger: logger)
    let database = Database(storage: storage.documents, functions: functionsInForce, logger: logger)
    let rulesReloader = installRules(rulesProgram, configuration, into: database.rules, logger: logger)
    let adminKey = try AdminKey.loadOrCreate(dataDirectory: configuration.storage.dataDirectory, configured: configuration.adminKey)
    let metrics = ServerMetrics()
    let accounts = try AccountsAssembly(configuration: configuration, storage: storage, accountMail: accountMail,
                                         logger: logger)
    let functions = installFunctions(functionsFile, configuration, into: database, auth: accounts.auth, metrics: metrics,
                                     logger: logger)

    let router = Router(context: HearthRequestContext.self)
    let recorder = RequestRecorder(metrics: metrics, level: configuration.requestLogLevel)
    router.add(middleware: RecordingMiddleware(recorder: recorder))
    router.add(middleware: ErrorMiddleware())
    if let cors = configuration.cors { router.add(middleware: PreflightMiddleware(policy: cors)) }
    let authenticator = Authenticator(adminKey: adminKey, auth: accounts.auth)
    router.add(middleware: AuthMiddleware(authenticator: authenticator))

    router.get("/healthz") { _, _ in jsonResponse(Array("{\"status\":\"ok\"}".utf8)) }
    let api = DocumentAPI(autoIDs: configuration.autoIDs)
    DocumentRoutes(database: database, api: api,
                   clientAddress: ClientAddress(trustForwardedFor: configuration.trustForwardedFor)).register(on: router)
    FileRoutes(database: database, api: FileAPI(maxFileSize: configuration.maxFileSize)).register(on: router)
    UploadRoutes(database: database, api: TusAPI(maxFileSize: configuration.maxFileSize,
                                                 lifetime: configuration.uploadLifetime)).register(on: router)
    accounts.register(on: router, configuration: configuration)
    AdminFixtureRoutes(database: database, auth: accounts.auth).register(on: router)
    FunctionRoutes(database: database).register(on: router)
    let push = PushService(storage: storage.push, now: configuration.authClock)
    PushRoutes(push: push).register(on: router)
    let feed = ChangeFeed(database: database, configuration: configuration.listen,
                          revocations: accounts.auth.revocations,
                          identities: { [auth = accounts.auth] session in
                              // nil: the session no longer works; thrown: it could not be looked up.
                              do { return try await auth.currentIdentity(sessionID: session.sessionID) } catch {
                                  if (error as? HearthError)?.code == .unauthenticated { return nil }
                                  throw error
                              }
                          },
                          logger: logger)
    let metricsAccess = try MetricsAccess(adminKey: adminKey, key: configuration.metricsKey)
    router.get("/metrics") { request, _ in
        try metricsAccess.check(request.headers[.authorization])
        metrics.databaseSize.set(Double(storage.documents.sizeOnDisk()))
        metrics.listenConnections.set(Double(feed.openConnections))
        metrics.openTransactions.set(Double(database.transactions.openCount))
        metrics.listenCommitsDropped.set(Double(feed.droppedCommits))
        metrics.reportScanned(storage.documents.documentsScanned)
        let decisions = database.rules.program?.readDecisionStatistics
        metrics.readDecisionsHeld.set(Double(decisions?.held ?? 0))
        metrics.readDecisionsReused.set(Double(decisions?.reused ?? 0))
        await metrics.reportTimers(database)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
    }
    let listen = ListenEndpoint(feed: feed, authenticator: authenticator)
    listen.register(on: router)

    let inline = configuration.inlineAnswers
        ? InlineAnswers(database: database, api: api, authenticator: authenticator, metrics: metrics, recorder: recorder,
                        logger: logger, serverName: serverName)
        : nil
    let channel = HTTP1WebSocketUpgradeChannel.Configuration(
        // No idle timeout of Hummingbird's: `ConnectionGuard` keeps every timeout, from a connection's first byte.
        http1: .init(additionalChannelHandlers: inline.map { [InlineAnswerHandler($0)] } ?? [], idleTimeout: nil,
                     httpDecoderConfiguration: .init(maxHeaderFieldSize: Limits.maxRequestHeadBytes,
                                                     maxHeaderListSize: Limits.maxRequestHeadBytes,
                                                     maxHeaderFieldCount: Limits.maxRequestHeaderFields)),
        ws: .init(maxFrameSize: configuration.listen.maxMessageBytes,
                  autoPing: .enabled(timePeriod: configuration.listen.heartbeatInterval)))
    var app = Application(
        router: router,
        server: HTTPServerBuilder { responder in
            GuardedHTTPChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: channel) { request, channel, _ in
                await listen.shouldUpgrade(request, channel: channel)
            }, configuration: configuration.connections, cors: configuration.cors, tls: tls)
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: serverName),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            // Where tools find this server (`hearth users`, `hearth fixtures load`) to act through it, and the
            // certificate file they trust over HTTPS: whatever it holds is what this server serves (after a SIGHUP).
            storage.documents.recordOwnerAddress(loopbackURL(host: configuration.host, port: port, secure: tls != nil),
                                                 certificate: tls.map { absolutePath($0.files.certificate) })
            accountMail.serverListening(host: configuration.host, port: port, secure: tls != nil)
            await onServerRunning(port)
        },
        logger: logger
    )
    app.addServices(StorageService(storage: storage.documents, logger: logger))
    app.addServices(UploadSweeper(database: database, interval: max(.milliseconds(10), configuration.sweepInterval), logger: logger))
    if let rulesReloader { app.addServices(rulesReloader) }
    app.addServices(functions.all)
    // One listener of SIGHUP for every file it reloads.
    var reloads: [@Sendable () -> Void] = []
    if let rulesReloader { reloads.append(rulesReloader.hangUp) }
    if let reloader = functions.reloader { reloads.append(reloader.hangUp) }
    if let tls { reloads.append { [logger] in tls.reload(reason: "SIGHUP", logger: logger) } }
    if !reloads.isEmpty { app.addServices(HangUpReloads(reloads)) }
    // After the store's service: shutdown runs in reverse, so these stop before the store closes.
    app.addServices(accounts.services)
    app.addServices(PushDeliveryService(push: push, settings: configuration.push,
                                        interval: max(.milliseconds(10), configuration.outboxInterval), metrics: metrics, logger: logger))
    // The feed after the application: a group stops its services in reverse, so listeners are closed (with
    // 1001) before the HTTP server stops.
    var services: [any Service] = [app]
    if let grpcPort = configuration.grpcPort {
        services.append(FirestoreServer(host: configuration.host, port: grpcPort, database: database, feed: feed,
                                        autoIDs: configuration.autoIDs,
                                        authenticate: firestoreCallers(authenticator, dev: configuration.dev),
                                        tls: tls, idleTimeout: configuration.connections.idleTimeout,
                                        prefaceTimeout: configuration.connections.requestHeadTimeout,
                                        logger: logger, onListening: onGRPCRunning))
    }
    services.append(feed)
    let server = ServiceGroup(configuration: .init(services: services, logger: logger))
    return (server, HearthServices(database: database, adminKey: adminKey, metrics: metrics, auth: accounts.auth,
                                   feed: feed))
}

/// How a gRPC call's `authorization` metadata becomes a caller: as over HTTP (the admin key, a user's access
/// token), and in development also the emulator's `Bearer owner`, with which Firestore's clients address an
/// emulator as its owner.
func firestoreCallers(_ authenticator: Authenticator, dev: Bool) -> FirestoreAuthenticate {
    { header in
        if dev, let header, AdminKey.bearerToken(header) == "owner" { return FirestoreCaller(identity: .admin) }
        let caller = try authenticator.caller(authorization: header)
        return FirestoreCaller(identity: caller.identity, session: caller.session, expires: caller.expires)
    }
}

/// The composite indexes and single-field overrides of an index file; every mistake names the file and its
/// place in it.
public func loadIndexFile(_ file: String) throws(HearthError) -> ([CompositeIndex], [FieldOverride]) {
    guard let bytes = FileManager.default.contents(atPath: file) else {
        throw .invalidArgument("cannot read the index file \(file)")
    }
    do {
        let json = try JSON.parse(Array(bytes))
        return (try CompositeIndex.parseFile(json), try FieldOverride.parseFile(json))
    } catch {
        throw HearthError(error.code, "index file \(file): \(error.message)")
    }
}

/// Where a process on this machine reaches a server listening on `host`: a wildcard address is reached on
/// loopback, any other as it is named; `https` when the server serves TLS.
func loopbackURL(host: String, port: Int, secure: Bool = false) -> String {
    let scheme = secure ? "https" : "http"
    switch host {
    case "", "0.0.0.0", "*": return "\(scheme)://127.0.0.1:\(port)"
    case "::", "[::]": return "\(scheme)://[::1]:\(port)"
    default: return host.contains(":") && !host.hasPrefix("[") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
    }
}

/// `path` as an absolute path, a relative one taken from the working directory (where the server read it).
func absolutePath(_ path: String) -> String {
    let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    return (full as NSString).standardizingPath
}

/// The `Server` header of every answer.
let serverName = "hearth"
