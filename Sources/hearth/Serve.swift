import ArgumentParser
import Foundation
import HearthCore
import HearthServer
import Logging
import ServiceLifecycle
import HearthEngine
import UnixSignals

/// `hearth serve`: runs the server until SIGTERM or SIGINT, then shuts down gracefully.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server.",
        discussion: """
            Settings come from flags, then HEARTH_* environment variables (HEARTH_DATA, HEARTH_HOST, HEARTH_PORT,
            HEARTH_ADMIN_KEY, HEARTH_METRICS_KEY, HEARTH_SYNCHRONOUS, HEARTH_AUTO_IDS, HEARTH_LOG_LEVEL, HEARTH_RULES,
            HEARTH_INDEXES, and those named with the account and connection settings), then a JSON config file
            (--config), in that order.
            """
    )

    @Option(help: "Data folder (default ./hearth-data).") var data: String?
    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (default 8080).") var port: Int?
    @Option(help: "Durability: NORMAL (default; survives process crashes, WAL synced within 50 ms) or FULL (every acknowledged commit synced to disk).") var synchronous: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String?
    @Option(help: ArgumentHelp("Deprecated and ignored: every commit writes its own field-index rows.", visibility: .hidden))
    var indexWrites: String?
    @Option(help: "Ids of documents created without one: ordered (default; 8 characters of the creation time, then 12 random, so they sort by creation and new documents are appended to the store's indexes) or random (Firestore's 20 random characters; an id reveals nothing).") var autoIds: String?
    @Option(help: "A JSON file with any of: data, host, port, adminKey, metricsKey, synchronous, autoIds, logLevel, rules, indexes, dev (true or false), and the account and connection settings below by their names (argon2Memory, accessTokenLifetime, idleTimeout…).") var config: String?
    @Flag(help: "Development mode: denials name the deciding rule.") var dev = false
    @Option(help: "Security rules file; reloaded when it changes or on SIGHUP.") var rules: String?
    @Option(help: "Composite indexes and single-field overrides (Firestore's firestore.indexes.json format); entries are built or dropped at start.") var indexes: String?
    @OptionGroup(title: "Accounts") var accounts: AuthOptions
    @OptionGroup(title: "Connections") var connections: ConnectionOptions
    @Option(help: "A fixture file whose documents are stored at start (documents already equal are left alone).") var fixtures: String?
    @Option(help: "Start a seed app (blue-avalanche, letter, prolific, comeover) with its rules and data in a temporary data folder.") var demo: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let file = try loadConfigFile()
        func setting(_ flag: String?, _ env: String, _ key: String) -> String? {
            flag ?? environment[env] ?? file[key]
        }
        var configuration = ServerConfiguration()
        configuration.storage.dataDirectory = setting(data, "HEARTH_DATA", "data") ?? configuration.storage.dataDirectory
        configuration.host = setting(host, "HEARTH_HOST", "host") ?? configuration.host
        if let text = setting(port.map(String.init), "HEARTH_PORT", "port") {
            guard let value = Int(text), (0...65535).contains(value) else { throw ValidationError("port must be 0-65535, got \(text)") }
            configuration.port = value
        }
        configuration.adminKey = environment["HEARTH_ADMIN_KEY"] ?? file["adminKey"]
        configuration.metricsKey = environment["HEARTH_METRICS_KEY"] ?? file["metricsKey"]
        if let text = setting(synchronous, "HEARTH_SYNCHRONOUS", "synchronous") {
            guard let value = StorageConfiguration.Synchronous(rawValue: text.uppercased()) else {
                throw ValidationError("synchronous must be FULL or NORMAL, got \(text)")
            }
            configuration.storage.synchronous = value
        }
        if let text = setting(indexWrites, "HEARTH_INDEX_WRITES", "indexWrites") {
            // Accepted for one more release, so that a start script written for the old setting still starts.
            guard ["deferred", "immediate"].contains(text.lowercased()) else {
                throw ValidationError("indexWrites must be deferred or immediate, got \(text)")
            }
            print("warning: --index-writes (HEARTH_INDEX_WRITES, indexWrites) is deprecated and ignored: every commit "
                  + "writes its own field-index rows; remove the setting")
        }
        if let text = setting(autoIds, "HEARTH_AUTO_IDS", "autoIds") {
            guard let value = AutoIDs(rawValue: text.lowercased()) else {
                throw ValidationError("autoIds must be ordered or random, got \(text)")
            }
            configuration.autoIDs = value
        }
        if let text = setting(logLevel, "HEARTH_LOG_LEVEL", "logLevel") {
            guard let value = Logger.Level(rawValue: text.lowercased()) else { throw ValidationError("unknown log level \(text)") }
            configuration.logLevel = value
        }
        configuration.dev = dev || file["dev"] == "true"
        configuration.rulesFile = setting(rules, "HEARTH_RULES", "rules")
        configuration.indexesFile = setting(indexes, "HEARTH_INDEXES", "indexes")
        try accounts.apply(to: &configuration, environment: environment, file: file)
        try connections.apply(to: &configuration, environment: environment, file: file)
        let startup = try prepareFixtures(&configuration)
        defer { startup.cleanUp() }

        let (host, folder) = (configuration.host, configuration.storage.dataDirectory)
        // A rules file that does not compile throws `RulesStartupError`, which the command line prints (every
        // diagnostic with its caret) before exiting with a failure status.
        let (server, services) = try await buildApplication(configuration: configuration) { port in
            print("hearth listening on http://\(host):\(port) (data in \(folder))")
            if let banner = startup.banner { print(banner) }
            fflush(nil)  // scripts and tests wait for this line on a pipe
        }
        try await startup.load(into: services)
        let group = ServiceGroup(configuration: .init(
            services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "hearth")))
        try await group.run()
    }

    func loadConfigFile() throws -> [String: String] {
        guard let config else { return [:] }
        guard let bytes = FileManager.default.contents(atPath: config) else { throw ValidationError("cannot read config file \(config)") }
        guard case .object(let pairs) = try JSON.parse(Array(bytes)) else { throw ValidationError("config file must hold a JSON object") }
        var out: [String: String] = [:]
        var known: Set<String> = ["data", "host", "port", "adminKey", "metricsKey", "synchronous", "indexWrites", "autoIds", "logLevel", "rules", "indexes", "dev"]
        known.formUnion(AuthOptions.configKeys)
        known.formUnion(ConnectionOptions.configKeys)
        for (key, value) in pairs {
            guard known.contains(key) else {
                throw ValidationError("unknown key '\(key)' in \(config); known keys: \(known.sorted().joined(separator: ", "))")
            }
            // Each setting's own check then decides whether the value suits it (as for flags and variables).
            switch value {
            case .string(let s): out[key] = s
            case .int(let i): out[key] = String(i)
            case .double(let d): out[key] = String(d)
            case .bool(let b): out[key] = b ? "true" : "false"
            default: throw ValidationError("'\(key)' in \(config) must be a string, a number or true/false")
            }
        }
        if let dev = out["dev"], dev != "true", dev != "false" {
            throw ValidationError("'dev' in \(config) must be true or false, got \(dev)")
        }
        return out
    }
}
