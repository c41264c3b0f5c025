import ArgumentParser
import HearthCore
import HearthMail
import HearthServer

/// Functions of `hearth serve`: the file, and how its events are delivered. Flags, then `HEARTH_*` variables,
/// then the config file.
struct FunctionsOptions: ParsableArguments {
    @Option(help: ServeSetting.functions.help) var functions: String?
    @Option(help: ServeSetting.functionsRetryDelay.help) var functionsRetryDelay: String?
    @Option(help: ServeSetting.functionsMaxAge.help) var functionsMaxAge: String?
    @Option(help: ServeSetting.functionsTimeout.help) var functionsTimeout: String?
    @Option(help: ServeSetting.functionsCaFile.help) var functionsCaFile: String?

    func apply(to configuration: inout ServerConfiguration, sources: ServeSetting.Sources) throws {
        configuration.functionsFile = sources.value(functions, .functions)
        func seconds(_ flag: String?, _ setting: ServeSetting, _ range: ClosedRange<Double>) throws -> Duration? {
            guard let text = sources.value(flag, setting) else { return nil }
            guard let value = Double(text), range.contains(value) else {
                throw ValidationError("\(setting.key) must be seconds from \(Self.text(range.lowerBound)) to \(Self.text(range.upperBound)), got \(text)")
            }
            return .milliseconds(Int64(value * 1000))
        }
        if let delay = try seconds(functionsRetryDelay, .functionsRetryDelay, 0.01...86_400) {
            configuration.functions.retry.initialDelay = delay
        }
        if let age = try seconds(functionsMaxAge, .functionsMaxAge, 1...30 * 86_400) { configuration.functions.retry.maxAge = age }
        if let timeout = try seconds(functionsTimeout, .functionsTimeout, 0.1...3600) { configuration.functions.timeout = timeout }
        if let caFile = sources.value(functionsCaFile, .functionsCaFile) {
            do throws(HearthError) { try configuration.functions.trust(caFile: caFile) } catch { throw ValidationError(error.message) }
        }
    }

    /// A bound as written in a message: `86400`, `0.01`.
    static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
