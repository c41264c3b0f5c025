import Foundation
import HearthCore
import NIOCore

/// Runs the delivery's passes over the queue of function events on one event loop, one at a time. A signal (a
/// commit that may have queued events, an outcome that may have let some go, the poll) asks for a pass; signals
/// during a pass ask for one more after it. The loop is one of those serving the server's connections, so a pass
/// wakes no thread of its own: an event read and sent costs no task, continuation or thread hop.
final class DeliveryPasses: SignalledByCommits, @unchecked Sendable {
    /// A pass: it calls its argument once done (its read may finish on a reader thread).
    typealias Pass = @Sendable (_ done: @escaping @Sendable () -> Void) -> Void

    private let lock = NSLock()
    let concerns: @Sendable ([ChangeRecord]) -> Bool
    private var loop: (any EventLoop)?
    private var pass: Pass?
    /// A pass is asked for and has not begun.
    private var asked = false
    /// A pass is scheduled or running.
    private var running = false

    /// `concerns` decides, from a commit's changes, whether it may have queued events.
    init(concerns: @escaping @Sendable ([ChangeRecord]) -> Bool) { self.concerns = concerns }

    /// Runs `pass` on `loop` whenever signalled, and once now.
    func start(on loop: any EventLoop, pass: @escaping Pass) {
        lock.withLock {
            self.loop = loop
            self.pass = pass
        }
        signal()
    }

    /// No pass begins after this one returns; one running finishes.
    func stop() {
        lock.withLock {
            loop = nil
            pass = nil
        }
    }

    /// Asks for a pass: at once if none is running, else after the one running.
    func signal() {
        lock.lock()
        guard let loop, !asked else { return lock.unlock() }
        asked = true
        let begin = !running
        running = true
        lock.unlock()
        if begin { loop.execute { self.begin() } }
    }

    private func begin() {
        let pass = lock.withLock {
            asked = false
            if self.pass == nil { running = false }
            return self.pass
        }
        pass? { self.finished() }
    }

    private func finished() {
        let again = lock.withLock {
            let again = asked ? loop : nil
            if again == nil { running = false }
            return again
        }
        again?.execute { self.begin() }
    }
}
