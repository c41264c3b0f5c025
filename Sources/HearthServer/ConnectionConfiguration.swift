/// How long an HTTP connection may wait on its client before the server closes it (`ConnectionGuard`).
/// A live WebSocket (`/v1/listen`) is past all of these: it has its own heartbeat (`ListenConfiguration`).
public struct ConnectionConfiguration: Sendable {
    /// A connection with no request under way and every answer written is closed, without a word, after
    /// this long; so is one whose client has not collected its answers for this long. Long enough for a
    /// client's connection pool to reuse it between bursts.
    public var idleTimeout: Duration = .seconds(60)
    /// A request head (request line and header fields) must arrive whole this long after its first byte,
    /// or it is answered `408` and the connection closed. A head fits in a packet or two.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// A request body that makes no progress (not one byte) for this long is answered `408` and the
    /// connection closed. Generous enough for TCP's retransmissions on a poor mobile link.
    public var requestBodyTimeout: Duration = .seconds(30)

    /// Makes the default configuration.
    public init() {}

    /// The shortest of the timeouts: how often a connection's timer looks at it at least.
    var shortest: Duration { min(idleTimeout, requestHeadTimeout, requestBodyTimeout) }
}
