import Foundation

/// A fixed number of threads of their own that run jobs in the order they come, started by the first job: for
/// work that blocks or computes for long (decoding an image, a CPU-heavy test body) and must not hold the event
/// loops or Swift concurrency's shared threads. At most `count` jobs run at once; the rest wait.
package final class WorkerThreads: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var started = false
    private let count: Int
    private let name: String

    /// Makes the pool; its threads are named `name-0`, `name-1`, ...
    package init(count: Int, name: String) {
        self.count = max(1, count)
        self.name = name
    }

    /// Queues `job` to run on one of the threads.
    package func enqueue(_ job: @escaping () -> Void) {
        condition.lock()
        if !started {
            started = true
            for index in 0..<count {
                let thread = Thread { [self] in work() }
                thread.name = "\(name)-\(index)"
                thread.start()
            }
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` on one of the threads and hands back its result.
    package func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue { continuation.resume(with: Result { try body() }) }
        }
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
