import Foundation
import HearthCore

/// A clock tests move by hand, for token expiry.
public final class ManualClock: @unchecked Sendable {  // `current` is only touched under `lock`.
    private let lock = NSLock()
    private var current: Timestamp

    /// Starts at the wall clock's time.
    public init(_ start: Timestamp = Timestamp.now()) { current = start }

    /// The current time.
    public var now: Timestamp {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves the clock forward.
    public func advance(seconds: Int64) {
        lock.lock()
        current = Timestamp(microseconds: current.microseconds + seconds * 1_000_000)
        lock.unlock()
    }

    /// The clock as a function, for `ServerConfiguration.authClock`.
    public var function: @Sendable () -> Timestamp { { [self] in self.now } }
}
