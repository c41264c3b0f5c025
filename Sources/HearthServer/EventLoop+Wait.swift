import NIOConcurrencyHelpers
import NIOCore

extension EventLoop {
    /// Waits until `deadline`, or until the task is cancelled, on one of this loop's timers. A wait cancelled
    /// early gives its memory back at once, where a cancelled `Task.sleep` keeps its memory until its deadline
    /// (swiftlang/swift#60441): every listen connection that ends cancels its deadline watcher's wait.
    func wait(until deadline: ContinuousClock.Instant) async {
        let wait = LoopWait()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let timer = scheduleTask(in: TimeAmount(ContinuousClock.now.duration(to: deadline))) { wait.end() }
                wait.start(continuation, timer)
            }
        } onCancel: {
            wait.end()
        }
    }
}

/// One `EventLoop.wait`: its continuation is resumed once, by the timer or by cancellation, whichever comes
/// first, and whichever of the two comes before the wait has started.
private final class LoopWait: Sendable {
    private enum State {
        case starting
        case waiting(CheckedContinuation<Void, Never>, Scheduled<Void>)
        case ended
    }

    private let state = NIOLockedValueBox(State.starting)

    func start(_ continuation: CheckedContinuation<Void, Never>, _ timer: Scheduled<Void>) {
        let ended = state.withLockedValue { state in
            guard case .starting = state else { return true }
            state = .waiting(continuation, timer)
            return false
        }
        if ended {
            timer.cancel()
            continuation.resume()
        }
    }

    /// The timer fired or the task was cancelled.
    func end() {
        let waiting = state.withLockedValue { state -> (CheckedContinuation<Void, Never>, Scheduled<Void>)? in
            defer { state = .ended }
            guard case .waiting(let continuation, let timer) = state else { return nil }
            return (continuation, timer)
        }
        guard let (continuation, timer) = waiting else { return }
        timer.cancel()
        continuation.resume()
    }
}
