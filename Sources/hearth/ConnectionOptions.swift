import ArgumentParser
import HearthCore
import HearthServer

/// The connection settings of `hearth serve` (timeouts, CORS, TLS): flags, then `HEARTH_*` variables, then the
/// config file.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ServeSetting.idleTimeout.help) var idleTimeout: Double?
    @Option(help: ServeSetting.requestHeadTimeout.help) var requestHeadTimeout: Double?
    @Option(help: ServeSetting.requestBodyTimeout.help) var requestBodyTimeout: Double?
    @Option(help: ServeSetting.corsOrigin.help) var corsOrigin: [String] = []
    @Option(help: ServeSetting.tlsCert.help) var tlsCert: String?
    @Option(help: ServeSetting.tlsKey.help) var tlsKey: String?

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
        if let text = sources.value(corsOrigin.isEmpty ? nil : corsOrigin.joined(separator: ","), .corsOrigin) {
            do {
                configuration.cors = try CORSPolicy(origins: text.split(separator: ",").map(String.init))
            } catch {
                throw ValidationError(error.message)
            }
        }
        switch (sources.value(tlsCert, .tlsCert), sources.value(tlsKey, .tlsKey)) {
        case (nil, nil): break
        case (let certificate?, let key?): configuration.tls = TLSFiles(certificate: certificate, key: key)
        case (_?, nil): throw ValidationError("tlsCert is given without tlsKey (--tls-key, HEARTH_TLS_KEY): HTTPS needs both")
        case (nil, _?): throw ValidationError("tlsKey is given without tlsCert (--tls-cert, HEARTH_TLS_CERT): HTTPS needs both")
        }
    }
}
