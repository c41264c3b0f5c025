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
    /// `afterBatch` runs on the thread after each batch, with a function that tells whether no job is queued.
    /// `idleWork` runs on a thread that has had no job for `idleDelay` seconds, with the same function; it
    /// returns true when it has more to do at the next quiet moment, false to wait for jobs only.
    init(name: String, resources: [Resource], batchLimit: Int = 1, batchBody: (@Sendable ([Job], Resource) -> Void)? = nil,
         afterBatch: (@Sendable (Resource, () -> Bool) -> Void)? = nil,
         idleDelay: TimeInterval = 0.1, idleWork: (@Sendable (Resource, () -> Bool) -> Bool)? = nil) {
        self.batchLimit = batchLimit
        running = resources.count
        for (i, resource) in resources.enumerated() {
            let threadName = "\(name)-\(i)"
            let thread = Thread { [self] in
                // Named from inside: set before `start`, the name does not reach the OS thread on Linux, and it
                // is what `top -H` and profilers show.
                Thread.current.name = threadName
                self.loop(resource, batchBody: batchBody, afterBatch: afterBatch, idleDelay: idleDelay, idleWork: idleWork)
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

    /// True when no job is queued.
    private var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return head == jobs.count
    }

    private func loop(_ resource: Resource, batchBody: (@Sendable ([Job], Resource) -> Void)?,
                      afterBatch: (@Sendable (Resource, () -> Bool) -> Void)?,
                      idleDelay: TimeInterval, idleWork: (@Sendable (Resource, () -> Bool) -> Bool)?) {
        // True while `idleWork` may have something to do: after every batch, until it says it has not.
        var idleWorkLeft = idleWork != nil
        while true {
            condition.lock()
            while head == jobs.count && !stopping {
                guard idleWorkLeft, let idleWork else {
                    condition.wait()
                    continue
                }
                if !condition.wait(until: Date(timeIntervalSinceNow: idleDelay)) && head == jobs.count && !stopping {
                    condition.unlock()
                    idleWorkLeft = idleWork(resource) { self.isIdle }
                    condition.lock()
                }
            }
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
            afterBatch?(resource) { self.isIdle }
            idleWorkLeft = idleWork != nil
        }
    }
}
