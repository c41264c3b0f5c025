import HearthCore
import Testing
@testable import HearthMail

@Suite struct RetryPolicyTests {
    static let t0 = Timestamp(microseconds: 1_800_000_000_000_000)
    static func at(_ seconds: Double) -> Timestamp { Timestamp(microseconds: t0.microseconds + Int64(seconds * 1_000_000)) }

    /// The default schedule without jitter: 30 s doubling, capped at an hour.
    @Test(arguments: [
        (1, 30.0), (2, 60), (3, 120), (4, 240), (5, 480), (6, 960), (7, 1920), (8, 3600), (11, 3600),
    ])
    func backoffDoublesUpToTheCap(attempts: Int, delay: Double) {
        let policy = RetryPolicy(maxAge: .seconds(10 * 86_400))
        #expect(policy.afterFailure(attempts: attempts, queuedAt: Self.t0, now: Self.t0, random: 0.5) == .retry(at: Self.at(delay)))
    }

    /// Jitter moves the delay by up to its fraction either way.
    @Test(arguments: [(0.0, 24.0), (0.25, 27), (0.5, 30), (1.0, 36)])
    func jitterSpreadsTheDelay(random: Double, delay: Double) {
        let policy = RetryPolicy()
        #expect(policy.afterFailure(attempts: 1, queuedAt: Self.t0, now: Self.t0, random: random) == .retry(at: Self.at(delay)))
    }

    /// A message is given up on after its last attempt, or when the next would come too late.
    @Test(arguments: [
        (12, 0.0, "gave up after 12 attempts"),
        (13, 0.0, "gave up after 13 attempts"),
        (3, 2 * 86_400 - 60.0, "gave up after 3 attempts: the next would be more than 172800 s after it was queued"),
    ])
    func boundsMakeAMessageDead(attempts: Int, age: Double, reason: String) {
        let policy = RetryPolicy()
        #expect(policy.afterFailure(attempts: attempts, queuedAt: Self.t0, now: Self.at(age), random: 0.5) == .dead(reason: reason))
    }

    @Test func aRetryWithinTheBoundsIsScheduled() {
        let policy = RetryPolicy(initialDelay: .milliseconds(100), maxAttempts: 3)
        #expect(policy.afterFailure(attempts: 2, queuedAt: Self.t0, now: Self.at(1), random: 0.5) == .retry(at: Self.at(1.2)))
    }
}
