import Foundation
import HearthCore

/// A small pool of dedicated threads for CPU- and memory-heavy work (Argon2), behind a bounded queue.
///
/// Argon2 blocks its thread for tens of milliseconds and allocates its whole memory cost up front, so it
/// must run neither on Swift concurrency's cooperative pool nor on NIO's event loops. Memory is bounded by
/// construction: at most `threads` jobs run at once (so at most `threads × memoryKiB` is allocated), at most
/// `maxQueueLength` wait, and a caller arriving at a full queue is refused with `resource-exhausted`
/// instead of piling up.
public final class HashingPool: @unchecked Sendable {  // `state` is only touched under `condition`.
    /// Sizes of the pool.
    public struct Configuration: Sendable, Hashable {
        /// Worker threads, i.e. the most jobs that run at once.
        public var threads: Int
        /// Most jobs that may wait for a worker; beyond it callers get `resource-exhausted`.
        public var maxQueueLength: Int

        /// One thread per core and a queue of 64 by default.
        public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount, maxQueueLength: Int = 64) {
            self.threads = max(1, threads)
            self.maxQueueLength = max(0, maxQueueLength)
        }
    }

    /// Counters for monitoring and tests.
    public struct Statistics: Sendable, Hashable {
        /// Jobs running right now.
        public var running: Int
        /// Jobs waiting for a worker right now.
        public var queued: Int
        /// The most jobs ever seen running at once.
        public var peakRunning: Int
        /// Jobs refused because the queue was full.
        public var rejected: Int
        /// Jobs completed.
        public var completed: Int
    }

    private struct Job {
        let id: UInt64
        /// Does the work and answers how to hand its result over; the hand-over runs after the pool's
        /// counters are updated, so a caller never sees counters that lag behind its own result.
        let run: @Sendable () -> @Sendable () -> Void
        let cancel: @Sendable () -> Void
    }

    private struct State {
        var queue: [Job] = []
        var head = 0
        var nextID: UInt64 = 0
        var stopping = false
        var liveThreads = 0
        var stats = Statistics(running: 0, queued: 0, peakRunning: 0, rejected: 0, completed: 0)

        var waiting: Int { queue.count - head }

        mutating func pop() -> Job? {
            guard head < queue.count else { return nil }
            let job = queue[head]
            head += 1
            // Compact once the consumed prefix dominates, so the array does not grow without bound.
            if head > 32, head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    /// The pool's sizes.
    public let configuration: Configuration
    private let condition = NSCondition()
    private var state = State()

    /// Starts the worker threads.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        state.liveThreads = configuration.threads
        for index in 0..<configuration.threads {
            let thread = Thread { [self] in
                Thread.current.name = "hearth-hash-\(index)"  // from inside, or Linux never sees it
                self.workerLoop()
            }
            thread.start()
        }
    }

    /// A process-wide pool sized to the machine, shared by every hasher that is not given its own.
    public static let shared = HashingPool()

    /// Current counters.
    public var statistics: Statistics {
        condition.lock()
        defer { condition.unlock() }
        var s = state.stats
        s.queued = state.waiting
        return s
    }

    /// Runs `work` on a pool thread and returns its result; refuses with `resource-exhausted` when the queue
    /// is full, and with `unavailable` when the pool is stopping or the calling task is cancelled while waiting.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws(HearthError) -> T {
        let id: UInt64 = {
            condition.lock()
            defer { condition.unlock() }
            state.nextID += 1
            return state.nextID
        }()
        let result: Result<T, HearthError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, HearthError>, Never>) in
                let job = Job(
                    id: id,
                    run: {
                        let value = work()
                        return { continuation.resume(returning: .success(value)) }
                    },
                    cancel: { continuation.resume(returning: .failure(.unavailable("The request was cancelled."))) }
                )
                condition.lock()
                if state.stopping {
                    condition.unlock()
                    continuation.resume(returning: .failure(.unavailable("The server is shutting down.")))
                    return
                }
                // Outstanding work is bounded: `threads` running plus `maxQueueLength` waiting.
                if state.stats.running + state.waiting >= configuration.threads + configuration.maxQueueLength {
                    state.stats.rejected += 1
                    condition.unlock()
                    continuation.resume(returning: .failure(.resourceExhausted(
                        "Too many sign-in requests are being processed; try again shortly.", retryAfter: 1)))
                    return
                }
                state.queue.append(job)
                condition.signal()
                condition.unlock()
            }
        } onCancel: {
            // Best effort: a job still waiting is dropped; one already running finishes normally.
            condition.lock()
            var dropped: Job?
            if let index = state.queue[state.head...].firstIndex(where: { $0.id == id }) {
                dropped = state.queue.remove(at: index)
            }
            condition.unlock()
            dropped?.cancel()
        }
        return try result.get()
    }

    /// Stops accepting work, fails the jobs still waiting with `unavailable`, and lets the workers exit
    /// after their current job.
    public func shutdown() {
        condition.lock()
        state.stopping = true
        let pending = Array(state.queue[state.head...])
        state.queue.removeAll()
        state.head = 0
        condition.broadcast()
        condition.unlock()
        for job in pending { job.cancel() }
    }

    private func workerLoop() {
        while true {
            condition.lock()
            var job = state.pop()
            while job == nil {
                if state.stopping {
                    state.liveThreads -= 1
                    condition.unlock()
                    return
                }
                condition.wait()
                job = state.pop()
            }
            state.stats.running += 1
            state.stats.peakRunning = max(state.stats.peakRunning, state.stats.running)
            condition.unlock()

            let handOver = job!.run()

            condition.lock()
            state.stats.running -= 1
            state.stats.completed += 1
            condition.unlock()
            handOver()
        }
    }
}
