import HearthCore

/// Signalled by the commits whose changes concern it (the delivery's passes, the clock's wake-ups); other
/// commits, most of them, leave it alone.
protocol SignalledByCommits: CommitObserver {
    /// Whether a commit's changes concern it.
    var concerns: @Sendable ([ChangeRecord]) -> Bool { get }
    func signal()
}

extension SignalledByCommits {
    func committed(_ changes: [ChangeRecord]) {
        if concerns(changes) { signal() }
    }
}
