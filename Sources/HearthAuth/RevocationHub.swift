/// Fans revocation events out to every subscriber, synchronously at publish time, so a listener learns
/// of a revoked session before the revoking call returns.
public final class RevocationHub: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<RevocationEvent>.Continuation] = [:]
    }

    /// Events a slow subscriber may fall behind by before the oldest are dropped.
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
            s.subscribers[s.nextID] = continuation
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers an event to every subscriber.
    public func publish(_ event: RevocationEvent) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for continuation in subscribers { continuation.yield(event) }
    }

    /// Subscribers right now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}
