import Foundation
import HearthEngine

/// Awaiting a connection's events in a test task. The server's writer never waits: it is told that events
/// wait (`onEventsReady`) and takes them where it runs (`takeReady`). These take them the same way, so that a
/// test reads exactly what a client would be sent.
extension ListenConnection {
    /// The next event to send, waiting for one; nil when the connection is over or the task is cancelled.
    public func next() async -> ListenEvent? {
        await nextBatch(max: 1)?.first
    }

    /// The events to send next (every one queued, up to `max`), waiting for at least one; nil when the
    /// connection is over or the task is cancelled.
    public func nextBatch(max: Int = 64) async -> [ListenEvent]? {
        while true {
            // Told before taking: events queued after an empty take wake this wait, not an earlier one.
            let wake = Wake()
            onEventsReady { wake.fire() }
            let (events, finished) = takeReady(max: max)
            if !events.isEmpty { return events }
            if finished { return nil }
            guard await wake.wait() else { return nil }
        }
    }
}

/// A signal one task waits for, fired from any thread before or after the wait begins.
private final class Wake: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var cancelled = false
    private var waiter: CheckedContinuation<Bool, Never>?

    func fire() {
        takeWaiter { fired = true }?.resume(returning: true)
    }

    /// True once fired; false when the task is cancelled first.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                lock.lock()
                if fired {
                    lock.unlock()
                    continuation.resume(returning: true)
                } else if cancelled || Task.isCancelled {
                    lock.unlock()
                    continuation.resume(returning: false)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            takeWaiter { cancelled = true }?.resume(returning: false)
        }
    }

    /// Marks the outcome and takes the waiting continuation (if any) under the lock, to resume outside it.
    private func takeWaiter(_ mark: () -> Void) -> CheckedContinuation<Bool, Never>? {
        lock.withLock {
            mark()
            defer { waiter = nil }
            return waiter
        }
    }
}
