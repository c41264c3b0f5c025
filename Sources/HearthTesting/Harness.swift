import Foundation
import HearthCore
import HearthEngine
import HearthServer

/// The test harness for apps built on Hearth: a server started with a rules file, a fixture file and optionally
/// an index file, either
/// in this process (`TestServer`) or as a real `hearth serve` (`ServerProcess`), the fixture's users signed up;
/// clients acting as the admin, as nobody, or as a signed-in user with claims; `reset()` between tests; rules test files run by the same runner as
/// `hearth rules test`. See docs/testing.md.
public final class Harness: @unchecked Sendable {
    /// Where the server runs.
    public enum Backend: Sendable {
        /// In this process, on a free loopback port (fast; the engine is reachable as `database`).
        case inProcess
        /// A `hearth serve` child process on a free loopback port (the binary users run).
        case process
    }

    /// The dataset `reset()` restores.
    public let fixture: FixtureFile
    /// The rules file in force, if any.
    public let rulesFile: String?
    /// The index file in force (composite indexes, single-field overrides), if any.
    public let indexesFile: String?
    /// Where the server runs.
    public let backend: Backend
    let dev: Bool
    /// Adjusts the in-process server's configuration (a child process takes none).
    let configure: @Sendable (inout ServerConfiguration) -> Void
    let lock = NSLock()
    var server: TestServer?
    var process: ServerProcess?
    var processData: String?

    /// Starts Hearth with a rules file (nil: only the admin passes), a fixture file (nil: empty) and an index
    /// file (nil: every field indexed, no composite index), resolved against the working directory; `dev` makes
    /// denials name the deciding rule; `configure` adjusts the rest of an in-process server's configuration.
    public static func start(rules: String? = nil, fixtures: String? = nil, indexes: String? = nil,
                             backend: Backend = .inProcess, dev: Bool = true,
                             configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in }) async throws -> Harness {
        let fixture = try fixtures.map { try FixtureFile(path: projectFile($0)) } ?? FixtureFile()
        return try await start(rules: rules.map { projectFile($0) }, fixture: fixture, indexes: indexes.map { projectFile($0) },
                               backend: backend, dev: dev, configure: configure)
    }

    /// Starts Hearth with a rules file, a dataset given as a value and an index file.
    public static func start(rules: String? = nil, fixture: FixtureFile, indexes: String? = nil,
                             backend: Backend = .inProcess, dev: Bool = true,
                             configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in }) async throws -> Harness {
        for (kind, file) in [("rules", rules), ("index", indexes)] {
            if let file, !FileManager.default.fileExists(atPath: file) {
                throw ExpectationFailure("\(kind) file \(file) not found (working directory \(FileManager.default.currentDirectoryPath))")
            }
        }
        let harness = Harness(fixture: fixture, rulesFile: rules, indexesFile: indexes, backend: backend, dev: dev,
                              configure: configure)
        try await harness.launch()
        return harness
    }

    /// A file named relative to the working directory, else to the package root (where `swift test` may not
    /// have been started).
    public static func projectFile(_ path: String, filePath: String = #filePath) -> String {
        if path.hasPrefix("/") || FileManager.default.fileExists(atPath: path) { return path }
        var root = URL(fileURLWithPath: filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }  // Sources/HearthTesting/Harness.swift
        let candidate = root.appendingPathComponent(path).path
        return FileManager.default.fileExists(atPath: candidate) ? candidate : path
    }

    init(fixture: FixtureFile, rulesFile: String?, indexesFile: String?, backend: Backend, dev: Bool,
         configure: @escaping @Sendable (inout ServerConfiguration) -> Void) {
        self.configure = configure
        self.fixture = fixture
        self.rulesFile = rulesFile
        self.indexesFile = indexesFile
        self.backend = backend
        self.dev = dev
    }

    /// The port the server listens on (a process backend gets a new one after `reset()`).
    public var port: Int {
        lock.withLock { server?.port ?? process?.port ?? 0 }
    }

    /// The admin key.
    public var adminKey: String {
        lock.withLock { server?.adminKey ?? process?.adminKey ?? "" }
    }

    /// The engine, for the in-process backend (nil for a process).
    public var database: Database? {
        lock.withLock { server?.services.database }
    }

    /// A new client acting as `caller` by default (the admin key, nobody, or a bearer token).
    public func client(as caller: Caller = .admin) -> HearthClient {
        HearthClient(port: port, adminKey: adminKey, as: caller)
    }

    /// Restores the dataset: every document not in the fixture is deleted and the fixture's documents are
    /// stored again. In process the store is reset in place; a child process is restarted over a fresh data
    /// folder, so clients made before must be made again.
    public func reset() async throws {
        if let services = lock.withLock({ server?.services }) {
            try await FixtureLoader(database: services.database, auth: services.auth).reset(to: fixture)
        } else {
            await stop()
            try await launch()
        }
    }

    /// Stops the server and removes its data.
    public func stop() async {
        let (server, process, folder) = lock.withLock {
            defer { self.server = nil; self.process = nil; self.processData = nil }
            return (self.server, self.process, self.processData)
        }
        await server?.stop()
        if let process {
            process.signal(SIGTERM)
            _ = try? await process.waitForExit()
        }
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// Runs a body against a fresh harness, then stops it.
    public static func with<T>(rules: String? = nil, fixtures: String? = nil, indexes: String? = nil,
                               backend: Backend = .inProcess, dev: Bool = true,
                               configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in },
                               _ body: (Harness) async throws -> T) async throws -> T {
        let harness = try await start(rules: rules, fixtures: fixtures, indexes: indexes, backend: backend, dev: dev,
                                      configure: configure)
        return try await withCleanup({ try await body(harness) }, cleanup: { await harness.stop() })
    }

    /// The dataset with its objects' bytes copied to `folder/files/`, and their sources pointing there.
    static func copyingFiles(of fixture: FixtureFile, into folder: String) throws -> FixtureFile {
        guard let directory = fixture.directory, !fixture.files.isEmpty else { return fixture }
        var copy = fixture
        try FileManager.default.createDirectory(atPath: folder + "/files", withIntermediateDirectories: true)
        for (i, file) in fixture.files.enumerated() {
            copy.files[i].source = "files/\(i)"
            try FileManager.default.copyItem(atPath: directory + "/" + file.source, toPath: folder + "/files/\(i)")
        }
        copy.directory = folder
        return copy
    }

    func launch() async throws {
        switch backend {
        case .inProcess:
            let (rules, indexes, dev, configure) = (rulesFile, indexesFile, dev, configure)
            let server = try await TestServer.start { configuration in
                configuration.rulesFile = rules
                configuration.indexesFile = indexes
                configuration.dev = dev
                configuration.useTestAccounts()
                configure(&configuration)
            }
            do {
                try await FixtureLoader(database: server.services.database, auth: server.services.auth).load(fixture)
            } catch {
                await server.stop()
                throw error
            }
            lock.withLock { self.server = server }
        case .process:
            let folder = TestFolders.make()
            // The child reads the dataset from a file, in the same format `hearth fixtures export` writes, with
            // the bytes of its objects copied beside it.
            let fixturePath = folder + "/fixture.json"
            try Data(Self.copyingFiles(of: fixture, into: folder).text.utf8).write(to: URL(fileURLWithPath: fixturePath))
            var arguments = ["--fixtures", fixturePath]
            if let rulesFile { arguments += ["--rules", rulesFile] }
            if let indexesFile { arguments += ["--indexes", indexesFile] }
            if dev { arguments.append("--dev") }
            // Cheap password hashing: the accounts are test data.
            arguments += ["--argon2-memory", "64", "--argon2-iterations", "1"]
            let process = try await ServerProcess.start(dataDirectory: folder + "/data", arguments: arguments)
            lock.withLock {
                self.process = process
                self.processData = folder
            }
        }
    }
}
