/// Told of every change the store commits, as GRDB's `TransactionObserver` is: a storage keeps a list of them
/// (`add(commitObserver:)`), and each hears every commit, in the change log's order, once it is durable.
public protocol CommitObserver: AnyObject, Sendable {
    /// The changes of one or more commits, in the change log's order. Runs on a store thread (the writer's or
    /// the syncer's), which waits for it: it must not block.
    func committed(_ changes: [ChangeRecord])
}
