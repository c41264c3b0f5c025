import Foundation

/// A connection's outgoing events: bounded, so that a slow client never makes the server buffer without
/// limit. One consumer (the connection's writer); any number of producers.
///
/// The consumer is told when events wait (`onReady`) and takes them (`takeReady`) where it runs, with no task
/// to wake: the protocol layer writes them from the connection's event loop that way.
final class EventQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer: [ListenEvent] = []
    private var head = 0
    private var finished = false
    /// Called when events wait and the consumer was not told yet (`signaled`).
    private var ready: (@Sendable () -> Void)?
    /// True from a `ready` call until `takeReady` finds nothing to take.
    private var signaled = false
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Makes the queue call `ready` whenever events wait that the consumer was not told of; the consumer
    /// then calls `takeReady` until it answers no events. Called at once when events wait already.
    func onReady(_ ready: @escaping @Sendable () -> Void) {
        lock.lock()
        // A finished queue takes nothing more, so it never calls again: kept, `ready` (which usually holds the
        // consumer, which holds the connection, which holds this queue) would keep all three alive.
        if !finished { self.ready = ready }
        let now = (head < buffer.count || finished) && !signaled
        if now { signaled = true }
        lock.unlock()
        if now { ready() }
    }

    /// Takes up to `max` queued events for a consumer told by `onReady`. With `writable` false (the client
    /// reads slowly) nothing is taken unless the queue is finished, whose last event always goes out; the
    /// consumer calls again when the client catches up. An answer with no events and `finished` false means
    /// the consumer will be told again when events arrive.
    func takeReady(max: Int, writable: Bool) -> (events: [ListenEvent], finished: Bool) {
        lock.lock()
        defer { lock.unlock() }
        guard writable || finished else { return ([], false) }
        let n = min(max, buffer.count - head)
        guard n > 0 else {
            signaled = false
            return ([], finished)
        }
        return (takeLocked(n), finished)
    }

    /// Takes the next `n` queued events (at least one); called with the lock held.
    private func takeLocked(_ n: Int) -> [ListenEvent] {
        let out = Array(buffer[head..<(head + n)])
        head += n
        compact()
        return out
    }

    /// Called with the lock held after an event was queued: the ready call to make, if any.
    private func signal() -> (@Sendable () -> Void)? {
        guard let ready, !signaled else { return nil }
        signaled = true
        return ready
    }

    private func compact() {
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 256)
            head = 0
        } else if head > 64 && head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
    }

    /// Queues an event; false when the queue is full or finished (the event is not queued).
    func push(_ event: ListenEvent) -> Bool {
        lock.lock()
        return pushLocked(event)
    }

    /// `push` with the lock held; unlocks.
    private func pushLocked(_ event: ListenEvent) -> Bool {
        if finished || buffer.count - head >= limit {
            lock.unlock()
            return false
        }
        buffer.append(event)
        let ready = signal()
        lock.unlock()
        ready?()
        return true
    }

    /// Queues a snapshot, or merges it into the same target's snapshot still waiting in the queue (behind
    /// which only other targets' snapshots wait): a client that reads slowly then gets one snapshot with
    /// everything since, and a backlog never grows past one snapshot per target. `merge` answers the merged
    /// snapshot, or nil when the two cannot merge. False when the queue is full or finished.
    func push(_ snapshot: ListenSnapshot, merging merge: (ListenSnapshot) -> ListenSnapshot?) -> Bool {
        lock.lock()
        if !finished {
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
        return pushLocked(.snapshot(snapshot))
    }

    /// Queues an event past the limit (replies to the client's own messages, which the rate limit bounds).
    func pushControl(_ event: ListenEvent) {
        lock.lock()
        if finished {
            lock.unlock()
            return
        }
        buffer.append(event)
        let ready = signal()
        lock.unlock()
        ready?()
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
        // The consumer is told even when it was told before: it may be waiting for the client to catch up,
        // and the last event goes out regardless. It is told for the last time, so `ready` is let go (see
        // `onReady`).
        let ready = self.ready
        self.ready = nil
        signaled = ready != nil
        lock.unlock()
        ready?()
    }

    /// Events queued now.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return buffer.count - head
    }
}
