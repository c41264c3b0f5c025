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
            Settings come from flags, then HEARTH_* environment variables (each named with its flag; also \
            HEARTH_ADMIN_KEY and HEARTH_METRICS_KEY, which have no flag), then a JSON config file (--config), in that \
            order. Every setting, variable and config key: docs/cli.md.
            """
    )

    @Option(help: ServeSetting.data.help) var data: String?
    @Option(help: ServeSetting.host.help) var host: String?
    @Option(help: ServeSetting.port.help) var port: Int?
    @Option(help: ServeSetting.grpcPort.help) var grpcPort: Int?
    @Option(help: ServeSetting.synchronous.help) var synchronous: String?
    @Option(help: ServeSetting.logLevel.help) var logLevel: String?
    @Option(help: ServeSetting.indexWrites.help) var indexWrites: String?
    @Option(help: ServeSetting.autoIds.help) var autoIds: String?
    @Option(help: "A JSON file of settings by their keys (every key: docs/cli.md), given neither as flags nor as HEARTH_* variables.")
    var config: String?
    @Flag(help: ServeSetting.dev.help) var dev = false
    @Option(help: ServeSetting.rules.help) var rules: String?
    @Option(help: ServeSetting.indexes.help) var indexes: String?
    @Option(help: ServeSetting.maxFileSize.help) var maxFileSize: Int64?
    @OptionGroup(title: "Accounts") var accounts: AuthOptions
    @OptionGroup(title: "Connections") var connections: ConnectionOptions
    @OptionGroup(title: "Email") var mail: MailOptions
    @OptionGroup(title: "Functions") var functions: FunctionsOptions
    @OptionGroup(title: "Push notifications") var push: PushOptions
    @Option(help: "A fixture file whose documents are stored at start (documents already equal are left alone).") var fixtures: String?
    @Option(help: "Start a seed app (blue-avalanche, letter, prolific, comeover) with its rules and data in a temporary data folder.") var demo: String?

    func run() async throws {
        let sources = ServeSetting.Sources(environment: ProcessInfo.processInfo.environment, file: try loadConfigFile())
        let file = sources.file
        func setting(_ flag: String?, _ setting: ServeSetting) -> String? { sources.value(flag, setting) }
        var configuration = ServerConfiguration()
        configuration.storage.dataDirectory = setting(data, .data) ?? configuration.storage.dataDirectory
        configuration.host = setting(host, .host) ?? configuration.host
        if let text = setting(port.map(String.init), .port) {
            guard let value = Int(text), (0...65535).contains(value) else { throw ValidationError("port must be 0-65535, got \(text)") }
            configuration.port = value
        }
        if let text = setting(grpcPort.map(String.init), .grpcPort) {
            guard let value = Int(text), (0...65535).contains(value) else { throw ValidationError("grpcPort must be 0-65535, got \(text)") }
            configuration.grpcPort = value
        }
        configuration.adminKey = setting(nil, .adminKey)
        configuration.metricsKey = setting(nil, .metricsKey)
        if let text = setting(synchronous, .synchronous) {
            guard let value = StorageConfiguration.Synchronous(rawValue: text.uppercased()) else {
                throw ValidationError("synchronous must be FULL or NORMAL, got \(text)")
            }
            configuration.storage.synchronous = value
        }
        if let text = setting(indexWrites, .indexWrites) {
            // Accepted for one more release, so that a start script written for the old setting still starts.
            guard ["deferred", "immediate"].contains(text.lowercased()) else {
                throw ValidationError("indexWrites must be deferred or immediate, got \(text)")
            }
            print("warning: --index-writes (HEARTH_INDEX_WRITES, indexWrites) is deprecated and ignored: every commit "
                  + "writes its own field-index rows; remove the setting")
        }
        if let text = setting(autoIds, .autoIds) {
            guard let value = AutoIDs(rawValue: text.lowercased()) else {
                throw ValidationError("autoIds must be ordered or random, got \(text)")
            }
            configuration.autoIDs = value
        }
        if let text = setting(logLevel, .logLevel) {
            guard let value = Logger.Level(rawValue: text.lowercased()) else { throw ValidationError("unknown log level \(text)") }
            configuration.logLevel = value
        }
        configuration.dev = dev || file["dev"] == "true"
        configuration.rulesFile = setting(rules, .rules)
        configuration.indexesFile = setting(indexes, .indexes)
        if let text = setting(maxFileSize.map(String.init), .maxFileSize) {
            guard let value = Int64(text), value >= 1 else { throw ValidationError("maxFileSize must be a number of bytes, 1 or more, got \(text)") }
            configuration.maxFileSize = value
        }
        try accounts.apply(to: &configuration, sources: sources)
        try connections.apply(to: &configuration, sources: sources)
        try mail.apply(to: &configuration, sources: sources)
        try functions.apply(to: &configuration, sources: sources)
        try push.apply(to: &configuration, sources: sources)
        let startup = try prepareFixtures(&configuration)
        defer { startup.cleanUp() }

        let (host, folder) = (configuration.host, configuration.storage.dataDirectory)
        let scheme = configuration.tls == nil ? "http" : "https"
        // A rules file that does not compile throws `RulesStartupError`, which the command line prints (every
        // diagnostic with its caret) before exiting with a failure status.
        let (server, services) = try await buildApplication(configuration: configuration, onGRPCRunning: { port in
            print("hearth serving Firestore's gRPC API on \(host):\(port)")
            fflush(nil)
        }) { port in
            print("hearth listening on \(scheme)://\(host):\(port) (data in \(folder))")
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
        let known = Set(ServeSetting.all.map { $0.key })
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
            // A list (corsOrigin's): its strings, separated by commas as in the variable.
            case .array(let items) where items.allSatisfy({ if case .string = $0 { true } else { false } }):
                out[key] = items.map { if case .string(let s) = $0 { s } else { "" } }.joined(separator: ",")
            default: throw ValidationError("'\(key)' in \(config) must be a string, a number, true/false or a list of strings")
            }
        }
        if let dev = out["dev"], dev != "true", dev != "false" {
            throw ValidationError("'dev' in \(config) must be true or false, got \(dev)")
        }
        return out
    }
}
