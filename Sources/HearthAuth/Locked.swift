import Foundation

/// A value guarded by a lock, for small synchronous critical sections that must never suspend
/// (an actor hop would be heavier than the work it guards).
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) { self.state = state }

    /// Runs `body` with exclusive access to the state.
    func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
