import Foundation
import HearthCore
import HearthEngine
import HearthServer
import Hummingbird
import ServiceLifecycle
import Logging

/// A real Hearth server for tests: built by the same `buildApplication` as `hearth serve`, listening on a
/// free loopback port, over a fresh data folder that is removed when the server stops.
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// The port of Firestore's gRPC service, when the configuration asked for it (`grpcPort`).
    public let grpcPort: Int?
    /// The admin key.
    public let adminKey: String
    /// The data folder.
    public let dataDirectory: String
    /// The running services (database engine and friends).
    public let services: HearthServices
    let task: Task<Void, any Error>
    let group: ServiceGroup
    let keepData: Bool

    /// Starts a server; `configure` may adjust the configuration (the port and data folder are set already).
    public static func start(dataDirectory: String? = nil, keepData: Bool = false,
                             configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.storage.dataDirectory = dataDirectory ?? TestFolders.make()
        configuration.logLevel = .warning
        configuration.adminKey = "hak_test_" + makeAutoID() + makeAutoID()
        configure(&configuration)
        let ready = PortBox()
        let grpcReady = PortBox()
        let (server, services) = try await buildApplication(configuration: configuration,
                                                            onGRPCRunning: { grpcReady.set($0) }) { port in ready.set(port) }
        let group = ServiceGroup(configuration: .init(services: [server], logger: Logger(label: "hearth.test")))
        let task = Task { try await group.run() }
        let port = try await ready.wait()
        let grpcPort = configuration.grpcPort == nil ? nil : try await grpcReady.wait()
        return TestServer(port: port, grpcPort: grpcPort, adminKey: configuration.adminKey!, dataDirectory: configuration.storage.dataDirectory,
                          services: services, task: task, group: group, keepData: keepData || dataDirectory != nil)
    }

    init(port: Int, grpcPort: Int?, adminKey: String, dataDirectory: String, services: HearthServices, task: Task<Void, any Error>,
         group: ServiceGroup, keepData: Bool) {
        self.group = group
        self.port = port
        self.grpcPort = grpcPort
        self.adminKey = adminKey
        self.dataDirectory = dataDirectory
        self.services = services
        self.task = task
        self.keepData = keepData
    }

    /// A new client connection, acting as `caller` by default.
    public func client(as caller: Caller = .admin) -> HearthClient {
        HearthClient(port: port, adminKey: adminKey, as: caller)
    }

    /// Stops the server (gracefully: the store closes after the HTTP server) and removes its data folder.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        if !keepData { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }

    /// Runs a body against a fresh server and a client, then stops the server.
    public static func with<T>(configure: (inout ServerConfiguration) -> Void = { _ in },
                               _ body: (TestServer, HearthClient) async throws -> T) async throws -> T {
        let server = try await start(configure: configure)
        let client = server.client()
        return try await withCleanup({ try await body(server, client) }) {
            await client.close()
            await server.stop()
        }
    }
}

/// Hands the bound port from the server's start-up callback to the test.
final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var port: Int?
    private var waiters: [CheckedContinuation<Int, any Error>] = []

    func set(_ value: Int) {
        lock.lock()
        port = value
        let pending = waiters
        waiters = []
        lock.unlock()
        for waiter in pending { waiter.resume(returning: value) }
    }

    func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            lock.lock()
            if let port {
                lock.unlock()
                continuation.resume(returning: port)
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}
