import Foundation
import HearthCore

/// The observers of a store, added and removed while it runs.
final class CommitObservers: @unchecked Sendable {
    private let lock = NSLock()
    private var observers: [any CommitObserver] = []

    func add(_ observer: any CommitObserver) {
        lock.withLock { observers.append(observer) }
    }

    func remove(_ observer: any CommitObserver) {
        lock.withLock { observers.removeAll { $0 === observer } }
    }

    /// Tells every observer, in the order they were added.
    func committed(_ changes: [ChangeRecord]) {
        let current = lock.withLock { observers }
        for observer in current { observer.committed(changes) }
    }
}
