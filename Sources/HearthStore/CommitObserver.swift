import Foundation

/// Told of every change the store commits, as GRDB's `TransactionObserver` is: a store keeps a list of them
/// (`Store.add(commitObserver:)`), and each hears every commit, in the change log's order, once it is durable.
public protocol CommitObserver: AnyObject, Sendable {
    /// The changes of one or more commits, in the change log's order. Runs on a store thread (the writer's or
    /// the syncer's), which waits for it: it must not block.
    func committed(_ changes: [ChangeRecord])
}

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
