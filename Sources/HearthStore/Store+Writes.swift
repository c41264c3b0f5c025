import HearthCore

/// Writes as jobs of the group commit, and the functions told of what they committed.
extension Store {
    /// Sets the function told of every committed change, in commit order, after the commit is durable.
    public func onCommit(_ body: @escaping @Sendable ([ChangeRecord]) -> Void) {
        commitHook.set(body)
    }

    /// Sets the function told when changes were committed that the commit hook will never be told of: another
    /// process logged more changes than the log keeps (`Configuration.changeLogRetention`) between two looks,
    /// and the oldest were trimmed before this store read them. It is called before the hook is told of the
    /// changes that follow the gap; whoever keeps state derived from the changes must read it again.
    public func onChangesMissed(_ body: @escaping @Sendable () -> Void) {
        commitHook.setMissed(body)
    }

    /// Runs a write job on the writer thread, inside a transaction shared with other queued jobs; the job's
    /// effects are rolled back alone if it throws. Returns once the commit is durable.
    public func write<T: Sendable>(_ body: @escaping @Sendable (WriteContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            write(body) { continuation.resume(with: $0) }
        }
    }

    /// `write(_:)` for callers that are not tasks (an event loop answering a request itself): `completion`
    /// runs once, on the writer thread, when the commit is durable or the job failed. It must not block.
    public func write<T: Sendable>(_ body: @escaping @Sendable (WriteContext) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let accepted = writer.submit { state in
            // Runs inside the batch: `state.current` is set by `runBatch`.
            let job = state.current!
            do {
                let value = try body(job.context)
                job.onCommit = { error in
                    if let error { completion(.failure(error)) } else { completion(.success(value)) }
                }
            } catch {
                job.failed = true
                job.onCommit = { _ in completion(.failure(error)) }
            }
        }
        if !accepted { completion(.failure(HearthError.unavailable("the server is shutting down"))) }
    }
}
