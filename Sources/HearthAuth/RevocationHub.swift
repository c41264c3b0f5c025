/// Fans revocation events out to every subscriber, synchronously at publish time, so a listener learns
/// of a revoked session before the revoking call returns.
public final class RevocationHub: Sendable {
    private struct Subscriber {
        let continuation: AsyncStream<RevocationEvent>.Continuation
        /// Events yielded since the last `sessionsUnknown` this subscriber was given (nil: none yet). While
        /// fewer than the buffer holds, that one is still waiting in its buffer.
        var sinceLookUpAgain: Int?
    }

    private struct State {
        var nextID = 0
        var subscribers: [Int: Subscriber] = [:]
    }

    /// Events a slow subscriber may fall behind by before the oldest are dropped (see `publish`).
    public static let bufferLimit = 4_096

    private let state = Locked(State())

    /// Makes a hub without subscribers.
    public init() {}

    /// A new stream of every event published from now on; it ends when the consumer stops iterating.
    public func events() -> AsyncStream<RevocationEvent> {
        let (stream, continuation) = AsyncStream<RevocationEvent>.makeStream(
            bufferingPolicy: .bufferingNewest(RevocationHub.bufferLimit))
        let id = state.withLock { s in
            s.nextID += 1
            s.subscribers[s.nextID] = Subscriber(continuation: continuation)
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers an event to every subscriber. A subscriber too far behind to take it loses its oldest
    /// events, and is then told to look every session up again (`RevocationEvent.sessionsUnknown`), so
    /// that no revocation is missed.
    public func publish(_ event: RevocationEvent) {
        state.withLock { s in
            for (id, var subscriber) in s.subscribers {
                let dropped: Bool
                if case .dropped = subscriber.continuation.yield(event) { dropped = true } else { dropped = false }
                subscriber.sinceLookUpAgain = subscriber.sinceLookUpAgain.map { $0 + 1 }
                if dropped, (subscriber.sinceLookUpAgain ?? .max) >= Self.bufferLimit - 1 {
                    subscriber.continuation.yield(.sessionsUnknown)
                    subscriber.sinceLookUpAgain = 0
                }
                s.subscribers[id] = subscriber
            }
        }
    }

    /// Subscribers right now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}
