import Foundation
import HearthCore

/// The commit hook, settable after the store starts, and the hook told when changes were missed.
final class CommitHookBox: @unchecked Sendable {
    private let lock = NSLock()
    private var body: (@Sendable ([ChangeRecord]) -> Void)?
    private var missed: (@Sendable () -> Void)?

    func setMissed(_ missed: @escaping @Sendable () -> Void) {
        lock.lock()
        self.missed = missed
        lock.unlock()
    }

    func callMissed() {
        lock.lock()
        let missed = self.missed
        lock.unlock()
        missed?()
    }

    func set(_ body: @escaping @Sendable ([ChangeRecord]) -> Void) {
        lock.lock()
        self.body = body
        lock.unlock()
    }

    func call(_ changes: [ChangeRecord]) {
        lock.lock()
        let body = self.body
        lock.unlock()
        body?(changes)
    }
}
