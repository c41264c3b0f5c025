import HearthCore

/// A device registered for push notifications by a signed-in user. The token is what the push service
/// (APNs or FCM) knows the device by: stored sealed, found by its hash, and never logged or shown.
public struct PushDevice: Sendable, Equatable {
    /// The service that delivers to the device.
    public enum Platform: String, Sendable, CaseIterable {
        case apns
        case fcm
    }

    /// The id the registration answered with; the device's name in every later request.
    public var id: String
    /// The account that registered it.
    public var uid: String
    public var platform: Platform
    /// The service's token for the device, in clear only in memory.
    public var token: String
    /// The topics it is subscribed to, sorted.
    public var topics: [String]
    public var createdAt: Timestamp

    public init(id: String, uid: String, platform: Platform, token: String, topics: [String], createdAt: Timestamp) {
        self.id = id
        self.uid = uid
        self.platform = platform
        self.token = token
        self.topics = topics
        self.createdAt = createdAt
    }

    /// The device as its owner sees it: never the token.
    public var json: JSON {
        .object([("id", .string(id)), ("platform", .string(platform.rawValue)),
                 ("topics", .array(topics.map { .string($0) })), ("createdAt", .string(createdAt.rfc3339))])
    }
}

/// One notification queued for one device: sending to a user or a topic queues one per device, each
/// delivered, retried or given up on by itself, with the outbox's delivery state.
public struct PushMessage: Sendable {
    public var id: String
    public var deviceID: String
    /// `{"notification"?: {"title"?, "body"?}, "data"?: {string: string}}`, as the send request gave it.
    public var content: JSON
    public var createdAt: Timestamp
    public var delivery: OutboxMessage.Delivery

    public init(id: String, deviceID: String, content: JSON, createdAt: Timestamp, delivery: OutboxMessage.Delivery = .new) {
        self.id = id
        self.deviceID = deviceID
        self.content = content
        self.createdAt = createdAt
        self.delivery = delivery
    }

    /// The message as the admin listing shows it.
    public var adminJSON: JSON {
        var fields: [(String, JSON)] = [
            ("id", .string(id)), ("device", .string(deviceID)), ("attempts", .int(Int64(delivery.attempts))),
            ("lastError", delivery.lastError.map { .string($0) } ?? .null), ("createdAt", .string(createdAt.rfc3339)),
        ]
        if let dead = delivery.deadAt {
            fields.append(("deadAt", .string(dead.rfc3339)))
        } else {
            fields.append(("nextAttemptAt", .string(delivery.nextAttemptAt.rfc3339)))
        }
        return .object(fields)
    }
}
