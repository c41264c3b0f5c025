import HearthEngine
import HearthRules
import Logging

/// The rules file named in the configuration did not load; the server does not start.
public struct RulesStartupError: Error, Sendable, CustomStringConvertible {
    /// The file, and every diagnostic with its caret (or why it could not be read).
    public let message: String
    public var description: String { message }
}

/// Compiles the configured rules file before anything else starts, so a broken file stops the server with
/// its diagnostics. Nil when no rules file is configured.
func compileRules(_ configuration: ServerConfiguration) throws -> RulesProgram? {
    guard let path = configuration.rulesFile else { return nil }
    do {
        return try RulesInForce.compile(file: path)
    } catch {
        throw RulesStartupError(message: "rules file \(path) does not load:\n\(error)")
    }
}

/// Installs the compiled rules and dev mode into the engine; returns the service that reloads the file. Runs once
/// the store is open, so that a server that cannot open its data folder says only that.
func installRules(_ program: RulesProgram?, _ configuration: ServerConfiguration, into rules: RulesInForce,
                  logger: Logger) -> RulesReloader? {
    rules.dev = configuration.dev
    rules.install(program)
    guard let path = configuration.rulesFile else {
        logger.notice("no rules file: every request except the admin key's is denied; pass one with --rules FILE (or HEARTH_RULES)")
        return nil
    }
    logger.info("rules loaded", metadata: ["file": "\(path)", "version": "\(program?.version ?? 1)"])
    var reloader = RulesReloader.Configuration()
    reloader.pollInterval = configuration.rulesPollInterval
    return RulesReloader(path: path, rules: rules, configuration: reloader, logger: logger)
}
