import Foundation

/// A fixed set of threads, each owning one resource (a SQLite connection), taking jobs from a shared queue.
/// Blocking SQLite work runs here, never on the event loops or Swift's cooperative pool.
final class WorkerThreads<Resource: Sendable>: @unchecked Sendable {
    typealias Job = @Sendable (Resource) -> Void

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var stopping = false
    private var running = 0
    private let batchLimit: Int

    /// Starts one thread per resource. With `batchLimit > 1`, a thread takes up to that many queued jobs at
    /// once and hands them over together (group commit).
    init(name: String, resources: [Resource], batchLimit: Int = 1, batchBody: (@Sendable ([Job], Resource) -> Void)? = nil) {
        self.batchLimit = batchLimit
        running = resources.count
        for (i, resource) in resources.enumerated() {
            let threadName = "\(name)-\(i)"
            let thread = Thread { [self] in
                // Named from inside: set before `start`, the name does not reach the OS thread on Linux, and it
                // is what `top -H` and profilers show.
                Thread.current.name = threadName
                self.loop(resource, batchBody: batchBody)
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// Queues a job. Returns false when the threads are stopping.
    @discardableResult
    func submit(_ job: @escaping Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if stopping { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Lets queued jobs finish, then stops the threads and waits for them.
    func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func loop(_ resource: Resource, batchBody: (@Sendable ([Job], Resource) -> Void)?) {
        while true {
            condition.lock()
            while head == jobs.count && !stopping { condition.wait() }
            if head == jobs.count && stopping {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let end = min(jobs.count, head + batchLimit)
            let batch = Array(jobs[head..<end])
            head = end
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 4096 {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            if let batchBody {
                batchBody(batch, resource)
            } else {
                for job in batch { job(resource) }
            }
        }
    }
}
