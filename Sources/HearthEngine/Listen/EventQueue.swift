import Foundation

/// A connection's outgoing events: bounded, so that a slow client never makes the server buffer without
/// limit. One consumer (the connection's writer); any number of producers.
final class EventQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer: [ListenEvent] = []
    private var head = 0
    private var waiter: CheckedContinuation<ListenEvent?, Never>?
    private var finished = false
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Queues an event; false when the queue is full or finished (the event is not queued).
    func push(_ event: ListenEvent) -> Bool {
        lock.lock()
        if finished || buffer.count - head >= limit {
            lock.unlock()
            return false
        }
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: event)
            return true
        }
        buffer.append(event)
        lock.unlock()
        return true
    }

    /// Queues an event past the limit (replies to the client's own messages, which the rate limit bounds).
    func pushControl(_ event: ListenEvent) {
        lock.lock()
        if finished {
            lock.unlock()
            return
        }
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: event)
            return
        }
        buffer.append(event)
        lock.unlock()
    }

    /// Drops what is queued, queues a last event, and ends the queue.
    func finish(with last: ListenEvent?) {
        lock.lock()
        if finished {
            lock.unlock()
            return
        }
        finished = true
        buffer = last.map { [$0] } ?? []
        head = 0
        let waiter = self.waiter
        self.waiter = nil
        if let waiter, !buffer.isEmpty { buffer.removeFirst() }
        lock.unlock()
        waiter?.resume(returning: last)
    }

    /// Events queued now.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return buffer.count - head
    }

    /// The next event, waiting for one; nil once finished and drained, or when the task is cancelled.
    func next() async -> ListenEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ListenEvent?, Never>) in
                lock.lock()
                if head < buffer.count {
                    let event = buffer[head]
                    head += 1
                    if head > 64 && head * 2 > buffer.count {
                        buffer.removeFirst(head)
                        head = 0
                    }
                    lock.unlock()
                    continuation.resume(returning: event)
                } else if finished || Task.isCancelled {
                    lock.unlock()
                    continuation.resume(returning: nil)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let waiter = self.waiter
            self.waiter = nil
            lock.unlock()
            waiter?.resume(returning: nil)
        }
    }
}
