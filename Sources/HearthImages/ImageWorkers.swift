import Foundation

/// A fixed number of threads of their own that run blocking work (decoding and encoding images) off Swift
/// concurrency's shared threads; at most that many jobs run at once, the rest wait in order, so the memory
/// images take is bounded by the thread count.
final class ImageWorkers: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var started = false
    let count: Int

    init(count: Int) { self.count = max(1, count) }

    /// Runs `body` on one of the threads and hands back its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue { continuation.resume(with: Result { try body() }) }
        }
    }

    private func enqueue(_ job: @escaping () -> Void) {
        condition.lock()
        if !started {
            started = true
            for index in 0..<count {
                let thread = Thread { [self] in work() }
                thread.name = "hearth-images-\(index)"
                thread.start()
            }
        }
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
            job()
        }
    }
}
