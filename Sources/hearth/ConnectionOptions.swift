import ArgumentParser
import HearthServer

/// The connection timeouts of `hearth serve`: flags, then `HEARTH_*` variables, then the config file.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ServeSetting.idleTimeout.help) var idleTimeout: Double?
    @Option(help: ServeSetting.requestHeadTimeout.help) var requestHeadTimeout: Double?
    @Option(help: ServeSetting.requestBodyTimeout.help) var requestBodyTimeout: Double?

    /// Shortest timeout accepted: each connection's timer looks at it at least this often.
    static let shortest = 0.1

    func apply(to configuration: inout ServerConfiguration, sources: ServeSetting.Sources) throws {
        func seconds(_ flag: Double?, _ setting: ServeSetting) throws -> Duration? {
            guard let text = sources.value(flag.map { String($0) }, setting) else { return nil }
            guard let value = Double(text), value >= Self.shortest, value <= 86_400 else {
                throw ValidationError("\(setting.key) must be a number of seconds from \(Self.shortest) to 86400, got \(text)")
            }
            return .milliseconds(Int64((value * 1000).rounded()))
        }
        if let d = try seconds(idleTimeout, .idleTimeout) { configuration.connections.idleTimeout = d }
        if let d = try seconds(requestHeadTimeout, .requestHeadTimeout) {
            configuration.connections.requestHeadTimeout = d
        }
        if let d = try seconds(requestBodyTimeout, .requestBodyTimeout) {
            configuration.connections.requestBodyTimeout = d
        }
    }
}
