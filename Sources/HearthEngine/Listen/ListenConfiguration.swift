/// Limits and timings of live updates.
public struct ListenConfiguration: Sendable {
    /// Targets one connection may hold at once.
    public var maxTargetsPerConnection = 100
    /// Events a connection may have waiting to be sent; past it the client is told to resume.
    public var maxQueuedEvents = 1_000
    /// Bytes of committed changes (documents as stored) the feed may have waiting while its views are open.
    /// When writes outrun it, later commits are dropped until it has caught up; then every view reads its
    /// result again, so listeners get the difference as one snapshot instead of each change.
    public var maxQueuedChangeBytes = 64 << 20
    /// Largest message a client may send, in bytes.
    public var maxMessageBytes = 64 * 1024
    /// Longest target id a client may choose, in bytes.
    public var maxTargetIDBytes = 256
    /// Messages a client may send per second, on average.
    public var messagesPerSecond: Double = 100
    /// Messages a client may send in a burst above the average.
    public var messageBurst: Double = 200
    /// How often the server pings an otherwise quiet connection.
    public var heartbeatInterval: Duration = .seconds(30)
    /// How long a connection may stay silent (no message, no pong) before it is closed.
    public var idleTimeout: Duration = .seconds(90)
    /// How long a connection may stay without credentials before it is closed, when it sent none.
    public var authTimeout: Duration = .seconds(30)

    /// Makes the default configuration.
    public init() {}
}
