import HearthCore

/// Counts failed attempts per account and per client address and answers how long a caller must wait
/// (exponential backoff with a cap). A plain state machine with an injected clock: the service keeps one
/// behind a lock; tests drive it by moving the clock.
///
/// A success clears the account's count but not the address's, so an attacker cannot reset the address
/// limit by signing in to an account of their own between guesses. Counts are forgotten after a quiet
/// period, and the number of remembered keys is capped so a flood of random emails cannot exhaust memory.
public struct LoginThrottle: Sendable {
    /// Thresholds and delays.
    public struct Configuration: Sendable, Hashable {
        /// Failures per account allowed before any delay.
        public var freeAccountFailures: Int
        /// Failures per client address allowed before any delay.
        public var freeAddressFailures: Int
        /// The first delay (whole seconds, at least one); each further failure doubles it.
        public var baseDelay: Duration
        /// The longest delay.
        public var maxDelay: Duration
        /// Time without a failure after which a key's count is forgotten.
        public var forgetAfter: Duration
        /// Most keys remembered per kind (account, address).
        public var maxEntries: Int

        /// Five free failures per account and twenty per address, then 1 s doubling to at most 15 min;
        /// forgotten after an hour of quiet.
        public init(freeAccountFailures: Int = 5, freeAddressFailures: Int = 20, baseDelay: Duration = .seconds(1),
                    maxDelay: Duration = .seconds(900), forgetAfter: Duration = .seconds(3_600),
                    maxEntries: Int = AuthLimits.maxThrottleEntries) {
            self.freeAccountFailures = max(0, freeAccountFailures)
            self.freeAddressFailures = max(0, freeAddressFailures)
            self.baseDelay = max(.seconds(1), baseDelay)
            self.maxDelay = max(self.baseDelay, maxDelay)
            self.forgetAfter = max(.seconds(1), forgetAfter)
            self.maxEntries = max(1, maxEntries)
        }
    }

    struct Entry: Sendable {
        var failures: Int
        var lastFailure: Timestamp
        var blockedUntil: Timestamp
    }

    /// The thresholds.
    public let configuration: Configuration
    /// The clock.
    public let now: @Sendable () -> Timestamp
    private(set) var accounts: [String: Entry] = [:]
    private(set) var addresses: [String: Entry] = [:]

    /// Makes an empty throttle.
    public init(configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Timestamp = Timestamp.now) {
        self.configuration = configuration
        self.now = now
    }

    /// Seconds the caller must wait before another attempt (rounded up, at least 1), or nil if it may try now.
    /// `account` is the normalized email (whether or not it has an account); `address` the client's address.
    public func retryAfter(account: String?, address: String?) -> Int? {
        let time = now()
        var until = Timestamp.min
        if let account, let e = live(accounts[account], at: time) { until = Swift.max(until, e.blockedUntil) }
        if let address, let e = live(addresses[address], at: time) { until = Swift.max(until, e.blockedUntil) }
        guard until > time else { return nil }
        let micros = until.microseconds - time.microseconds
        return Int((micros + 999_999) / 1_000_000)
    }

    /// Records a failed attempt.
    public mutating func recordFailure(account: String?, address: String?) {
        let time = now()
        if let account {
            accounts[account] = bump(accounts[account], free: configuration.freeAccountFailures, at: time)
            if accounts.count > configuration.maxEntries { Self.prune(&accounts, at: time, configuration) }
        }
        if let address {
            addresses[address] = bump(addresses[address], free: configuration.freeAddressFailures, at: time)
            if addresses.count > configuration.maxEntries { Self.prune(&addresses, at: time, configuration) }
        }
    }

    /// Records a success: the account's count starts over.
    public mutating func recordSuccess(account: String?) {
        if let account { accounts[account] = nil }
    }

    /// Drops forgotten entries (for a periodic sweep).
    public mutating func sweep() {
        let time = now()
        accounts = accounts.filter { live($0.value, at: time) != nil }
        addresses = addresses.filter { live($0.value, at: time) != nil }
    }

    /// Keys currently remembered (accounts plus addresses), for monitoring and tests.
    public var entryCount: Int { accounts.count + addresses.count }

    private func live(_ entry: Entry?, at time: Timestamp) -> Entry? {
        guard let entry, time.microseconds - entry.lastFailure.microseconds < configuration.forgetAfter.inMicroseconds
        else { return nil }
        return entry
    }

    private func bump(_ entry: Entry?, free: Int, at time: Timestamp) -> Entry {
        var e = live(entry, at: time) ?? Entry(failures: 0, lastFailure: time, blockedUntil: .min)
        e.failures += 1
        e.lastFailure = time
        let over = e.failures - free
        if over > 0 {
            // base × 2^(over-1), capped; the shift is bounded so it cannot overflow.
            let shift = Int64(Swift.min(over - 1, 40))
            let delay = Swift.min(Self.wholeSeconds(configuration.baseDelay) << shift, Self.wholeSeconds(configuration.maxDelay))
            e.blockedUntil = Timestamp(microseconds: time.microseconds + delay * 1_000_000)
        }
        return e
    }

    /// A delay in whole seconds, a fraction counting as one more: delays are announced in seconds.
    private static func wholeSeconds(_ duration: Duration) -> Int64 {
        duration.components.seconds + (duration.components.attoseconds > 0 ? 1 : 0)
    }

    private static func prune(_ table: inout [String: Entry], at time: Timestamp, _ configuration: Configuration) {
        let horizon = time.microseconds - configuration.forgetAfter.inMicroseconds
        table = table.filter { $0.value.lastFailure.microseconds > horizon }
        if table.count > configuration.maxEntries {
            // Still full of recent keys: forget the stalest half rather than grow.
            let keep = table.sorted { $0.value.lastFailure > $1.value.lastFailure }.prefix(configuration.maxEntries / 2)
            table = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
