import ServiceLifecycle

/// How the outbox's SMTP sender and the push queue's sender work through their queue: batches of what is due
/// read one after the other (a batch finishes before the next is read, so no message is in two attempts at
/// once) and a few messages of a batch sent at once.
enum DeliveryQueue {
    /// Sends batches until shutdown: the next as soon as one had messages, else after `interval`.
    /// `sendDue` sends one batch and answers how many messages it tried.
    static func run(every interval: Duration, _ sendDue: () async -> Int) async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let sent = await sendDue()
            if sent == 0 { try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } }
        }
    }

    /// How many messages a batch reads for `concurrency` senders.
    static func batchSize(concurrency: Int) -> Int { max(1, concurrency) * 8 }

    /// Sends `messages`, `concurrency` of them (at least one) at a time, and returns when all are done.
    static func send<Message: Sendable>(_ messages: [Message], concurrency: Int,
                                        _ send: @escaping @Sendable (Message) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            var next = messages.makeIterator()
            for _ in 0..<max(1, concurrency) {
                guard let message = next.next() else { break }
                group.addTask { await send(message) }
            }
            while await group.next() != nil {
                guard let message = next.next() else { continue }
                group.addTask { await send(message) }
            }
        }
    }
}
