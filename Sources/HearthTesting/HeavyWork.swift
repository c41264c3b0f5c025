import Foundation
import HearthCore

/// Runs CPU-heavy test bodies (the differential tests' reference evaluation over thousands of documents) on
/// threads of their own instead of Swift concurrency's shared pool.
///
/// The shared pool has one thread per core. Tests running in parallel whose jobs each compute for long
/// stretches between suspension points hold every one of those threads, and the other tests' tasks (a
/// change feed's loop, a client waiting for a server) wait behind them for seconds. Threads of their own
/// are preempted by the system like any other, so the rest of the suite keeps its turn.
public enum HeavyWork {
    /// Runs `body`, and every child task it starts, on the heavy-work threads.
    public static func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(executor, operation: body)
    }

    private static let executor = ThreadsExecutor(threads: 2)
}

/// A task executor that runs jobs on threads of its own, in the order they come.
final class ThreadsExecutor: TaskExecutor, @unchecked Sendable {
    private let threads: WorkerThreads

    init(threads: Int) { self.threads = WorkerThreads(count: threads, name: "heavy-work") }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        threads.enqueue { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
