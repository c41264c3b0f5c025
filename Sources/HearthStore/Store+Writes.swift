import HearthCore

/// Writes as jobs of the group commit, and the observers told of what they committed.
extension Store {
    /// Adds an observer told of every committed change, in commit order, after the commit is durable; it is
    /// kept until removed. Observers are told in the order they were added.
    public func add(commitObserver observer: any CommitObserver) {
        commitObservers.add(observer)
    }

    /// Stops telling an observer of commits.
    public func remove(commitObserver observer: any CommitObserver) {
        commitObservers.remove(observer)
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
