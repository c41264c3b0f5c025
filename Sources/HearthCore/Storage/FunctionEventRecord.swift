/// An event for a function endpoint as the storage queues it: recorded in the commit of the change that
/// caused it, deleted in the commit that records its delivery, and kept when it is dead.
public struct FunctionEventRecord: Sendable, Equatable {
    /// The queue's order (commit order); 0 until stored.
    public var sequence: Int64
    /// The event's id (`webhook-id`), the same on every attempt.
    public var id: String
    /// The endpoint's name in the functions file.
    public var endpoint: String
    /// Events with one key are delivered one at a time, in sequence order (a document's, for one endpoint).
    public var orderingKey: String
    /// The JSON body sent.
    public var body: [UInt8]
    /// When the event happened.
    public var createdAt: Timestamp
    /// When it was queued (again, after a retry asked for), from which its maximum age counts.
    public var queuedAt: Timestamp
    /// Attempts so far.
    public var attempts: Int
    /// When the next attempt is due.
    public var nextAttemptAt: Timestamp
    /// Why the last attempt failed.
    public var lastError: String?
    /// When it was given up on; nil while pending.
    public var deadAt: Timestamp?

    /// Makes a new pending event.
    public init(id: String, endpoint: String, orderingKey: String, body: [UInt8], createdAt: Timestamp) {
        sequence = 0
        self.id = id
        self.endpoint = endpoint
        self.orderingKey = orderingKey
        self.body = body
        self.createdAt = createdAt
        queuedAt = createdAt
        attempts = 0
        nextAttemptAt = createdAt
        lastError = nil
        deadAt = nil
    }
}
