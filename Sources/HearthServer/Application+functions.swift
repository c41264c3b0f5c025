import HearthAuth
import HearthCore
import HearthEngine
import Logging
import ServiceLifecycle

/// The functions file named in the configuration, parsed before anything else starts so that a broken file
/// stops the server with the place of its mistake. Nil when none is configured.
func loadFunctions(_ configuration: ServerConfiguration) throws(HearthError) -> FunctionsFile? {
    guard let path = configuration.functionsFile else { return nil }
    return try FunctionsFile.load(file: path)
}

/// What keeps the functions file in step with the file (`reloader`, also told of SIGHUP) and delivers its
/// events (`delivery`).
struct FunctionServices {
    var reloader: FileReloader?
    var delivery: FunctionDeliveryService?
    var clock: FunctionClockService?

    var all: [any Service] { [reloader as (any Service)?, delivery, clock].compactMap { $0 } }
}

/// Puts the functions file in force and returns the services that keep it in step with the file and deliver
/// its events. Delivery runs whenever a file is configured, so events queued before a restart go out.
func installFunctions(_ file: FunctionsFile?, _ configuration: ServerConfiguration, into database: Database,
                      auth: AuthService, metrics: ServerMetrics, logger: Logger) -> FunctionServices {
    database.functions.install(file)
    guard let path = configuration.functionsFile, let file else { return FunctionServices() }
    logger.info("functions loaded", metadata: ["file": "\(path)", "endpoints": "\(file.endpoints.count)",
                                               "triggers": "\(file.triggers.count)", "schedules": "\(file.schedules.count)",
                                               "timers": "\(file.timers.count)"])
    var reloader = FileReloader.Configuration()
    reloader.pollInterval = configuration.rulesPollInterval
    // Delivery looks at the queue again after a commit that may have queued a document's event; the clock after
    // one that may have armed or dropped a timer. Other commits (most, often) wake neither.
    let functions = database.functions
    let passes = DeliveryPasses { changes in
        guard let file = functions.file, file.watchesDocuments else { return false }
        return changes.contains { file.watches($0.path) }
    }
    database.storage.add(commitObserver: passes)
    functions.onCommittedEvents { passes.signal() }
    let clockWakeup = FunctionsWakeup { changes in
        guard let file = functions.file, !file.timers.isEmpty else { return false }
        return changes.contains { file.armsTimers($0.path) }
    }
    database.storage.add(commitObserver: clockWakeup)
    return FunctionServices(
        reloader: FileReloader(path: path, what: "functions", configuration: reloader, logger: logger) { path in
            try database.functions.load(file: path)
        },
        delivery: FunctionDeliveryService(database: database, settings: configuration.functions, passes: passes,
                                          tokens: IdentityTokens(auth: auth, lifetime: configuration.functions.identityTokenLifetime),
                                          metrics: metrics, logger: logger),
        clock: FunctionClockService(database: database, clock: configuration.functionsClock, wakeup: clockWakeup, delivery: passes,
                                    metrics: metrics, logger: logger))
}
