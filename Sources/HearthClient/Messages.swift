import HearthCore
import NIOHTTP1

/// Who a push notification goes to (`POST /v1/push/send`'s `to`).
public enum PushRecipient: Sendable, Equatable {
    /// Every device the user registered.
    case user(String)
    /// One device, by the id its registration answered.
    case device(String)
    /// Every device subscribed to the topic.
    case topic(String)
}

/// What a push notification shows: a title, a body or both.
public struct PushNotification: Sendable, Equatable {
    public var title: String?
    public var body: String?

    public init(title: String? = nil, body: String? = nil) {
        self.title = title
        self.body = body
    }
}

/// Sending app email and push notifications (docs/messages.md), which the server allows to the admin key and
/// to a function's identity token (the `auth.token` of an event), never to a user's session.
extension Hearth {
    /// Queues one email per distinct address (`POST /v1/messages/email`); answers the queued messages' ids.
    @discardableResult
    public func sendEmail(to addresses: [String], subject: String, text: String, html: String? = nil)
        async throws(HearthClientError) -> [String] {
        var body: [(String, JSON)] = [("to", .array(addresses.map { .string($0) })), ("subject", .string(subject)),
                                      ("text", .string(text))]
        if let html { body.append(("html", .string(html))) }
        return try Self.queued(try await call(.POST, "/v1/messages/email", body: .object(body)))
    }

    /// Queues a push notification for each device of the recipient (`POST /v1/push/send`); answers the queued
    /// notifications' ids, none when the user has no device or nobody is subscribed to the topic.
    @discardableResult
    public func sendPush(to recipient: PushRecipient, notification: PushNotification? = nil, data: [String: String] = [:])
        async throws(HearthClientError) -> [String] {
        let to: (String, String)
        switch recipient {
        case .user(let uid): to = ("uid", uid)
        case .device(let id): to = ("device", id)
        case .topic(let topic): to = ("topic", topic)
        }
        var body: [(String, JSON)] = [("to", .object([(to.0, .string(to.1))]))]
        if let notification {
            var fields: [(String, JSON)] = []
            if let title = notification.title { fields.append(("title", .string(title))) }
            if let text = notification.body { fields.append(("body", .string(text))) }
            body.append(("notification", .object(fields)))
        }
        if !data.isEmpty {
            body.append(("data", .object(data.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
        }
        return try Self.queued(try await call(.POST, "/v1/push/send", body: .object(body)))
    }

    private static func queued(_ answer: Transport.Answer) throws(HearthClientError) -> [String] {
        guard case .array(let ids)? = answer.body?["queued"] else { throw .decoding("the answer lacks 'queued'") }
        return ids.compactMap(\.stringValue)
    }
}
