import Foundation
import HearthCore
import HearthEngine
import Logging
import Prometheus
import ServiceLifecycle

/// Fires timers and schedules: reads the time through `clock` (the wall clock, or one a test moves), sleeps
/// until the earliest timer or slot is due, and has each due one turned into an event by a write job
/// (`.functions(.fireTimers)`, `.runSchedules`), which `FunctionDeliveryService` then delivers like any other.
/// Only the next due time is held in memory: timers are read from the storage by due time, a page at a time.
/// A commit may arm an earlier timer, so each one wakes it (`wakeup`) to read the next due time again.
struct FunctionClockService: Service {
    let database: Database
    let clock: @Sendable () -> Timestamp
    let wakeup: FunctionsWakeup
    /// The delivery service's: a run that queued events wakes it (such a commit changes no document, so the
    /// storage tells no commit observer of it).
    let delivery: DeliveryPasses
    let metrics: ServerMetrics
    let logger: Logger
    /// The timers one write job fires at most.
    var pageSize = 512
    /// The longest sleep: how soon a moved clock or a reloaded file is noticed.
    var pollInterval: Duration = .seconds(1)

    func run() async {
        // A shutdown wakes the loop, which would otherwise notice it only after its wait.
        await withGracefulShutdownHandler { await tend() } onGracefulShutdown: { wakeup.signal() }
    }

    /// Fires the timers and schedules due, and waits for the next, until the server shuts down.
    func tend() async {
        var scheduleNext: Timestamp?
        var scheduleSpecs: [String]?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var timerNext: Timestamp?
            do {
                timerNext = try await nextTimer()
                while let due = timerNext, due <= clock() {
                    let outcome = try await run(.fireTimers(now: clock(), limit: pageSize))
                    metrics.functionTimersFired.increment(by: Int64(outcome.fired))
                    if outcome.fired > 0 { delivery.signal() }
                    timerNext = outcome.next
                }
                let specs = database.functions.file?.schedules.map { "\($0.name) \($0.spec)" } ?? []
                if specs != scheduleSpecs || scheduleNext.map({ $0 <= clock() }) == true {
                    let outcome = try await run(.runSchedules(now: clock()))
                    metrics.functionScheduleRuns.increment(by: Int64(outcome.fired))
                    if outcome.fired > 0 { delivery.signal() }
                    scheduleNext = outcome.next
                    scheduleSpecs = specs
                }
            } catch {
                logger.error("could not run the function timers and schedules", metadata: ["error": "\(error)"])
            }
            let now = clock()
            var wait = pollInterval
            for due in [timerNext, scheduleNext].compactMap({ $0 }) {
                wait = min(wait, .microseconds(max(0, due.microseconds - now.microseconds)))
            }
            await wakeup.wait(upTo: wait)
        }
    }

    func nextTimer() async throws -> Timestamp? { try await run(.timers(count: false)).next }

    func run(_ operation: FunctionsOperation) async throws -> FunctionClockOutcome {
        guard case .functionClock(let outcome) = try await database.perform(.functions(operation), as: .admin) else {
            throw HearthError.internal("the timers answered something else")
        }
        return outcome
    }
}

extension ServerMetrics {
    /// Brings the pending-timers gauge up to date (read at each scrape: one count of an indexed table).
    func reportTimers(_ database: Database) async {
        guard case .functionClock(let outcome)? = try? await database.perform(.functions(.timers(count: true)), as: .admin) else { return }
        functionTimersPending.set(Double(outcome.pending ?? 0))
    }
}

/// Wakes the clock service: after a commit that `concerns` it, and when signalled.
final class FunctionsWakeup: SignalledByCommits, @unchecked Sendable {
    private let lock = NSLock()
    private var signalled = false
    private var waiter: CheckedContinuation<Void, Never>?
    let concerns: @Sendable ([ChangeRecord]) -> Bool

    /// `concerns` decides, from a commit's changes, whether it may have armed or dropped a timer.
    init(concerns: @escaping @Sendable ([ChangeRecord]) -> Bool) { self.concerns = concerns }

    func signal() {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume()
        } else {
            signalled = true
            lock.unlock()
        }
    }

    /// Returns at the next signal (at once if one came since the last wait).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if signalled {
                signalled = false
                lock.unlock()
                continuation.resume()
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }

    /// Returns at the next signal (at once if one came since the last wait), or after `timeout`.
    func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                if (try? await Task.sleep(for: timeout)) != nil { signal() }
            }
            await wait()
            group.cancelAll()
        }
    }
}
