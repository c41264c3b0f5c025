import ArgumentParser
import HearthCore
import HearthMail
import HearthServer

/// Functions of `hearth serve`: the file, and how its events are delivered. Flags, then `HEARTH_*` variables,
/// then the config file.
struct FunctionsOptions: ParsableArguments {
    @Option(help: ServeSetting.functions.help) var functions: String?
    @Option(help: ServeSetting.functionsRetryDelay.help) var functionsRetryDelay: Double?
    @Option(help: ServeSetting.functionsMaxAge.help) var functionsMaxAge: Double?
    @Option(help: ServeSetting.functionsTimeout.help) var functionsTimeout: Double?

    func apply(to configuration: inout ServerConfiguration, sources: ServeSetting.Sources) throws {
        configuration.functionsFile = sources.value(functions, .functions)
        func seconds(_ flag: Double?, _ setting: ServeSetting, _ range: ClosedRange<Double>) throws -> Duration? {
            guard let text = sources.value(flag.map { "\($0)" }, setting) else { return nil }
            guard let value = Double(text), range.contains(value) else {
                throw ValidationError("\(setting.key) must be seconds from \(range.lowerBound) to \(range.upperBound), got \(text)")
            }
            return .milliseconds(Int64(value * 1000))
        }
        if let delay = try seconds(functionsRetryDelay, .functionsRetryDelay, 0.01...86_400) {
            configuration.functions.retry.initialDelay = delay
        }
        if let age = try seconds(functionsMaxAge, .functionsMaxAge, 1...30 * 86_400) { configuration.functions.retry.maxAge = age }
        if let timeout = try seconds(functionsTimeout, .functionsTimeout, 0.1...3600) { configuration.functions.timeout = timeout }
    }
}
