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

    /// Queues a snapshot, or merges it into the same target's snapshot still waiting in the queue (behind
    /// which only other targets' snapshots wait): a client that reads slowly then gets one snapshot with
    /// everything since, and a backlog never grows past one snapshot per target. `merge` answers the merged
    /// snapshot, or nil when the two cannot merge. False when the queue is full or finished.
    func push(_ snapshot: ListenSnapshot, merging merge: (ListenSnapshot) -> ListenSnapshot?) -> Bool {
        lock.lock()
        if !finished, waiter == nil {
            var k = buffer.count - 1
            while k >= head {
                guard case .snapshot(let earlier) = buffer[k] else { break }
                if earlier.targetID == snapshot.targetID {
                    if earlier.serial == snapshot.serial, let merged = merge(earlier) {
                        buffer[k] = .snapshot(merged)
                        lock.unlock()
                        return true
                    }
                    break
                }
                k -= 1
            }
        }
        lock.unlock()
        return push(.snapshot(snapshot))
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
        if waiter != nil, !buffer.isEmpty { buffer.removeFirst() }
        lock.unlock()
        waiter?.resume(returning: last)
    }

    /// Takes up to `max` queued events without waiting.
    func take(max: Int) -> [ListenEvent] {
        lock.lock()
        defer { lock.unlock() }
        let n = min(max, buffer.count - head)
        guard n > 0 else { return [] }
        let out = Array(buffer[head..<(head + n)])
        head += n
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 256)
            head = 0
        } else if head > 64 && head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
        return out
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
