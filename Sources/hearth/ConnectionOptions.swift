import ArgumentParser
import HearthServer

/// The connection timeouts of `hearth serve`: flags, then `HEARTH_*` variables, then the config file.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "Seconds a connection with nothing under way stays open (default 60; HEARTH_IDLE_TIMEOUT).")
    var idleTimeout: Double?
    @Option(help: "Seconds a request head may take to arrive whole, from its first byte, before a 408 (default 10; HEARTH_REQUEST_HEAD_TIMEOUT).")
    var requestHeadTimeout: Double?
    @Option(help: "Seconds a request body may go without a byte before a 408 (default 30; HEARTH_REQUEST_BODY_TIMEOUT).")
    var requestBodyTimeout: Double?

    /// Keys of these settings in the config file.
    static let configKeys: Set<String> = ["idleTimeout", "requestHeadTimeout", "requestBodyTimeout"]

    /// Shortest timeout accepted: each connection's timer looks at it at least this often.
    static let shortest = 0.1

    func apply(to configuration: inout ServerConfiguration, environment: [String: String], file: [String: String]) throws {
        func seconds(_ flag: Double?, _ env: String, _ key: String) throws -> Duration? {
            guard let text = flag.map({ String($0) }) ?? environment[env] ?? file[key] else { return nil }
            guard let value = Double(text), value >= Self.shortest, value <= 86_400 else {
                throw ValidationError("\(key) must be a number of seconds from \(Self.shortest) to 86400, got \(text)")
            }
            return .milliseconds(Int64((value * 1000).rounded()))
        }
        if let d = try seconds(idleTimeout, "HEARTH_IDLE_TIMEOUT", "idleTimeout") { configuration.connections.idleTimeout = d }
        if let d = try seconds(requestHeadTimeout, "HEARTH_REQUEST_HEAD_TIMEOUT", "requestHeadTimeout") {
            configuration.connections.requestHeadTimeout = d
        }
        if let d = try seconds(requestBodyTimeout, "HEARTH_REQUEST_BODY_TIMEOUT", "requestBodyTimeout") {
            configuration.connections.requestBodyTimeout = d
        }
    }
}
