import ArgumentParser
import HearthServer
import HearthCore
import HearthAuth

/// The account settings of `hearth serve`: flags, then `HEARTH_*` variables, then the config file.
struct AuthOptions: ParsableArguments {
    @Option(help: "Argon2id memory cost in KiB for new password hashes (default 19456, OWASP's minimum; HEARTH_ARGON2_MEMORY).")
    var argon2Memory: UInt32?
    @Option(help: "Argon2id iterations (default 2; HEARTH_ARGON2_ITERATIONS).") var argon2Iterations: UInt32?
    @Option(help: "Argon2id parallelism (default 1; HEARTH_ARGON2_PARALLELISM).") var argon2Parallelism: UInt32?
    @Option(help: "Seconds an access token works (default 3600; HEARTH_ACCESS_TOKEN_LIFETIME).") var accessTokenLifetime: Int64?
    @Option(help: "Seconds a refresh token works (default 2592000, 30 days; HEARTH_REFRESH_TOKEN_LIFETIME).") var refreshTokenLifetime: Int64?
    @Flag(help: "Take the client address for sign-in throttling from X-Forwarded-For (only behind a trusted proxy; HEARTH_TRUST_FORWARDED_FOR).")
    var trustForwardedFor = false

    /// Keys of these settings in the config file.
    static let configKeys: Set<String> = [
        "argon2Memory", "argon2Iterations", "argon2Parallelism", "accessTokenLifetime", "refreshTokenLifetime",
        "trustForwardedFor",
    ]

    func apply(to configuration: inout ServerConfiguration, environment: [String: String], file: [String: String]) throws {
        func setting(_ flag: String?, _ env: String, _ key: String) -> String? {
            flag ?? environment[env] ?? file[key]
        }
        func number<T: FixedWidthInteger>(_ flag: T?, _ env: String, _ key: String, _ range: ClosedRange<T>) throws -> T? {
            guard let text = setting(flag.map { String($0) }, env, key) else { return nil }
            guard let value = T(text), range.contains(value) else {
                throw ValidationError("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound), got \(text)")
            }
            return value
        }
        var hashing = configuration.passwordHashing
        if let m = try number(argon2Memory, "HEARTH_ARGON2_MEMORY", "argon2Memory", 8...1_048_576) { hashing.memoryKiB = m }
        if let t = try number(argon2Iterations, "HEARTH_ARGON2_ITERATIONS", "argon2Iterations", 1...64) { hashing.iterations = t }
        if let p = try number(argon2Parallelism, "HEARTH_ARGON2_PARALLELISM", "argon2Parallelism", 1...16) {
            hashing.parallelism = p
        }
        do {
            try hashing.validate()
        } catch {
            throw ValidationError(error.message)
        }
        configuration.passwordHashing = hashing
        let year: Int64 = 366 * 86_400
        if let s = try number(accessTokenLifetime, "HEARTH_ACCESS_TOKEN_LIFETIME", "accessTokenLifetime", 1...year) {
            configuration.auth.accessTokenLifetime = .seconds(s)
        }
        if let s = try number(refreshTokenLifetime, "HEARTH_REFRESH_TOKEN_LIFETIME", "refreshTokenLifetime", 1...10 * year) {
            configuration.auth.refreshTokenLifetime = .seconds(s)
        }
        if let text = setting(trustForwardedFor ? "true" : nil, "HEARTH_TRUST_FORWARDED_FOR", "trustForwardedFor") {
            guard let value = Bool(text.lowercased()) else {
                throw ValidationError("trustForwardedFor must be true or false, got \(text)")
            }
            configuration.trustForwardedFor = value
        }
    }
}
