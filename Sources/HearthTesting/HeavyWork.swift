import Foundation

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

/// A task executor that runs jobs on its own threads, in the order they come.
final class ThreadsExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init(threads: Int) {
        for k in 0..<threads {
            let thread = Thread { [self] in work() }
            thread.name = "heavy-work-\(k)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
