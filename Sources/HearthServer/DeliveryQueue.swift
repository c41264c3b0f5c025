import HearthCore
import Logging
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

    /// Reads one batch with `due` (given how many to read at most) and sends it, `concurrency` messages at
    /// once; answers how many were tried. A failed read is logged (`queue`: "the outbox") and tries none.
    static func sendDue<Message: Sendable>(concurrency: Int, logger: Logger, queue: String,
                                           _ due: (Int) async throws(HearthError) -> [Message],
                                           _ send: @escaping @Sendable (Message) async -> Void) async -> Int {
        let messages: [Message]
        do {
            messages = try await due(max(1, concurrency) * 8)
        } catch {
            logger.error("could not read \(queue)", metadata: ["error": "\(error.message)"])
            return 0
        }
        await self.send(messages, concurrency: concurrency, send)
        return messages.count
    }

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
