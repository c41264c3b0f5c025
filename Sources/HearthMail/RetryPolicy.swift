import HearthCore

/// When a message that failed for a passing reason is tried again: exponential backoff
/// (`initialDelay · multiplierⁿ⁻¹`, capped at `maxDelay`) with random jitter of up to `jitter` of the
/// delay either way, until `maxAttempts` attempts or `maxAge` since it was queued; then it is dead.
public struct RetryPolicy: Sendable, Equatable {
    /// Delay after the first failed attempt.
    public var initialDelay: Duration
    /// Growth of the delay per attempt.
    public var multiplier: Double
    /// The longest delay.
    public var maxDelay: Duration
    /// Fraction of the delay (0-1) added or taken away at random, so that many messages failed at once
    /// do not come back at once.
    public var jitter: Double
    /// Attempts before a message is dead.
    public var maxAttempts: Int
    /// Age after which a message is dead instead of tried again.
    public var maxAge: Duration

    /// The default: 30 s doubling to at most an hour, ±20 %, 12 attempts within two days.
    public init(initialDelay: Duration = .seconds(30), multiplier: Double = 2, maxDelay: Duration = .seconds(3600),
                jitter: Double = 0.2, maxAttempts: Int = 12, maxAge: Duration = .seconds(2 * 86_400)) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.maxAttempts = maxAttempts
        self.maxAge = maxAge
    }

    /// What follows a failed attempt.
    public enum Decision: Sendable, Equatable {
        /// Try again at this time.
        case retry(at: Timestamp)
        /// Give up; the reason says which bound was reached.
        case dead(reason: String)
    }

    /// The decision after attempt number `attempts` (1 for the first) failed with a passing error at `now`,
    /// for a message queued at `queuedAt`. `random` is a number in 0...1 (0.5 means no jitter).
    public func afterFailure(attempts: Int, queuedAt: Timestamp, now: Timestamp, random: Double) -> Decision {
        if attempts >= maxAttempts { return .dead(reason: "gave up after \(attempts) attempts") }
        let base = min(initialDelay.inSeconds * pow(multiplier, Double(max(0, attempts - 1))), maxDelay.inSeconds)
        let spread = base * min(max(jitter, 0), 1) * (min(max(random, 0), 1) * 2 - 1)
        let delay = max(0, base + spread)
        let next = Timestamp(microseconds: now.microseconds + Int64(delay * 1_000_000))
        if next.microseconds - queuedAt.microseconds > Int64(maxAge.inSeconds * 1_000_000) {
            return .dead(reason: "gave up after \(attempts) attempts: the next would be more than \(Int(maxAge.inSeconds)) s after it was queued")
        }
        return .retry(at: next)
    }

    private func pow(_ x: Double, _ y: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(y) { result *= x; if result > 1e12 { break } }
        return result
    }
}
