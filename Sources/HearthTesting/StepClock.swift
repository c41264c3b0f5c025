import Foundation

/// A Swift `Clock` that tests move by hand, for state machines that take one (`ConnectionState`). Its time
/// starts at zero and moves only with `advance(by:)`.
public final class StepClock: Clock, @unchecked Sendable {  // `offset` is only touched under `lock`.
    /// A point in this clock's time: how far it is from the start.
    public struct Instant: InstantProtocol {
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let lock = NSLock()
    private var offset = Duration.zero

    /// Starts at zero.
    public init() {}

    /// The current time.
    public var now: Instant {
        lock.lock()
        defer { lock.unlock() }
        return Instant(offset: offset)
    }

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Moves the clock forward.
    public func advance(by duration: Duration) {
        lock.lock()
        offset += duration
        lock.unlock()
    }

    /// Waits (in real time, a little at a time) until a test has moved the clock past `deadline`.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        while now < deadline { try await Task.sleep(for: .milliseconds(1)) }
    }
}
