import ArgumentParser
import HearthServer
import HearthCore
import HearthAuth

/// The account settings of `hearth serve`: flags, then `HEARTH_*` variables, then the config file.
struct AuthOptions: ParsableArguments {
    @Option(help: ServeSetting.argon2Memory.help) var argon2Memory: UInt32?
    @Option(help: ServeSetting.argon2Iterations.help) var argon2Iterations: UInt32?
    @Option(help: ServeSetting.argon2Parallelism.help) var argon2Parallelism: UInt32?
    @Option(help: ServeSetting.accessTokenLifetime.help) var accessTokenLifetime: Int64?
    @Option(help: ServeSetting.refreshTokenLifetime.help) var refreshTokenLifetime: Int64?
    @Flag(help: ServeSetting.trustForwardedFor.help) var trustForwardedFor = false

    func apply(to configuration: inout ServerConfiguration, sources: ServeSetting.Sources) throws {
        func number<T: FixedWidthInteger>(_ flag: T?, _ setting: ServeSetting, _ range: ClosedRange<T>) throws -> T? {
            guard let text = sources.value(flag.map { String($0) }, setting) else { return nil }
            guard let value = T(text), range.contains(value) else {
                throw ValidationError("\(setting.key) must be an integer from \(range.lowerBound) to \(range.upperBound), got \(text)")
            }
            return value
        }
        var hashing = configuration.passwordHashing
        if let m = try number(argon2Memory, .argon2Memory, 8...1_048_576) { hashing.memoryKiB = m }
        if let t = try number(argon2Iterations, .argon2Iterations, 1...64) { hashing.iterations = t }
        if let p = try number(argon2Parallelism, .argon2Parallelism, 1...16) {
            hashing.parallelism = p
        }
        do {
            try hashing.validate()
        } catch {
            throw ValidationError(error.message)
        }
        configuration.passwordHashing = hashing
        let year: Int64 = 366 * 86_400
        if let s = try number(accessTokenLifetime, .accessTokenLifetime, 1...year) {
            configuration.auth.accessTokenLifetime = .seconds(s)
        }
        if let s = try number(refreshTokenLifetime, .refreshTokenLifetime, 1...10 * year) {
            configuration.auth.refreshTokenLifetime = .seconds(s)
        }
        if let text = sources.value(trustForwardedFor ? "true" : nil, .trustForwardedFor) {
            guard let value = Bool(text.lowercased()) else {
                throw ValidationError("trustForwardedFor must be true or false, got \(text)")
            }
            configuration.trustForwardedFor = value
        }
    }
}
