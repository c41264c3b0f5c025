import HearthCore
import NIOHTTP1

/// Sending app email and push notifications (docs/messages.md), which the server allows to the admin key and
/// to a function's identity token (the `auth.token` of an event), never to a user's session.
extension Hearth {
    /// Queues one email per distinct address (`POST /v1/messages/email`); answers the queued messages' ids.
    /// With an `idempotencyKey` (a function's event id and what it sends, say), the same call again within a
    /// day queues nothing and answers the same ids: a retried handler does not send twice.
    @discardableResult
    public func sendEmail(to addresses: [String], subject: String, text: String, html: String? = nil,
                          idempotencyKey: String? = nil) async throws(HearthClientError) -> [String] {
        var body: [(String, JSON)] = [("to", .array(addresses.map { .string($0) })), ("subject", .string(subject)),
                                      ("text", .string(text))]
        if let html { body.append(("html", .string(html))) }
        return try Self.queued(try await call(.POST, "/v1/messages/email", body: .object(body),
                                              headers: Self.idempotency(idempotencyKey)))
    }

    /// Queues a push notification for each device of the recipient (`POST /v1/push/send`); answers the queued
    /// notifications' ids, none when the user has no device or nobody is subscribed to the topic. An
    /// `idempotencyKey` works as for `sendEmail`.
    @discardableResult
    public func sendPush(to recipient: PushRecipient, notification: PushNotification? = nil, data: [String: String] = [:],
                         idempotencyKey: String? = nil) async throws(HearthClientError) -> [String] {
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
        return try Self.queued(try await call(.POST, "/v1/push/send", body: .object(body), headers: Self.idempotency(idempotencyKey)))
    }

    private static func idempotency(_ key: String?) -> [(String, String)] {
        key.map { [("Idempotency-Key", $0)] } ?? []
    }

    private static func queued(_ answer: Transport.Answer) throws(HearthClientError) -> [String] {
        guard case .array(let ids)? = answer.body?["queued"] else { throw .decoding("the answer lacks 'queued'") }
        return ids.compactMap(\.stringValue)
    }
}
