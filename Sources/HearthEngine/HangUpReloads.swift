import ServiceLifecycle
import UnixSignals

/// The process's one listener of SIGHUP (a signal has one handler, so there is one listener): on each, runs
/// every reload it was given, in order: the rules file (`RulesReloader.hangUp`), the TLS certificate.
public struct HangUpReloads: Service {
    let reloads: [@Sendable () -> Void]

    /// Runs `reloads` on each SIGHUP until graceful shutdown.
    public init(_ reloads: [@Sendable () -> Void]) {
        self.reloads = reloads
    }

    public func run() async {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            for reload in reloads { reload() }
        }
    }
}
