import HearthCore

/// A connection's timers and message budget: a plain state machine over an injected clock's instants, so the
/// protocol's rate limit, idle timeout and authentication deadline are tested without sockets or sleeping.
public struct ListenSessionState<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    let configuration: ListenConfiguration
    private var tokens: Double
    private var refilled: Instant
    private var lastActivity: Instant
    let opened: Instant

    /// What to do about an incoming message.
    public enum Verdict: Sendable, Equatable {
        /// Handle it.
        case accept
        /// Over the rate: answer `resource-exhausted` and drop it.
        case reject
    }

    /// Starts the state of a connection opened at `now`.
    public init(configuration: ListenConfiguration, now: Instant) {
        self.configuration = configuration
        tokens = configuration.messageBurst
        refilled = now
        lastActivity = now
        opened = now
    }

    /// Accounts for a message received at `now` (a token bucket: `messagesPerSecond`, bursts of `messageBurst`).
    public mutating func received(at now: Instant) -> Verdict {
        lastActivity = now
        let elapsed = refilled.duration(to: now)
        let seconds = elapsed.inSeconds
        tokens = min(configuration.messageBurst, tokens + max(0, seconds) * configuration.messagesPerSecond)
        refilled = now
        guard tokens >= 1 else { return .reject }
        tokens -= 1
        return .accept
    }

    /// When the connection must be closed if nothing else happens: without credentials, at the authentication
    /// deadline; without targets, after `idleTimeout` of silence; with targets, never (heartbeats watch it).
    public func deadline(authenticated: Bool, hasTargets: Bool) -> Instant? {
        if !authenticated && !hasTargets { return opened.advanced(by: configuration.authTimeout) }
        if hasTargets { return nil }
        return lastActivity.advanced(by: configuration.idleTimeout)
    }
}
