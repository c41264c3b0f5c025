import HearthCore

/// The outbox: account messages (queued with their tokens) and app email wait here until delivered, into
/// the development mailbox file or over SMTP, each with its delivery state.
extension AuthService {
    /// Hands pending outbox messages to `deliver` (oldest first, at most `limit`) and deletes each one it
    /// accepts (answers true); answers how many were delivered. A message not accepted stays for the next run.
    @discardableResult
    public func deliverOutbox(limit: Int = 100, using deliver: @Sendable (OutboxMessage) async -> Bool)
        async throws(HearthError) -> Int {
        var delivered = 0
        for message in try await storage.pendingOutbox(dueBy: now(), limit: limit) where await deliver(message) {
            try await storage.deleteOutbox(id: message.id)
            delivered += 1
        }
        return delivered
    }

    /// Queues an app email, one message per address (all or none, in one commit); answers their ids.
    /// The caller has checked the addresses and sizes.
    public func queueEmail(_ email: OutboxMessage.Email, key: SendKey? = nil) async throws(HearthError) -> [String] {
        let time = now()
        let messages = email.to.map {
            OutboxMessage(id: makeAutoID(), purpose: .email, to: $0, uid: "", token: "", expiresAt: time,
                          createdAt: time, email: email)
        }
        if let key { return try await storage.enqueueOutbox(messages, key: key, at: time) }
        try await storage.enqueueOutbox(messages)
        return messages.map(\.id)
    }

    /// Pending messages due now, oldest first.
    public func dueOutbox(limit: Int) async throws(HearthError) -> [OutboxMessage] {
        try await storage.pendingOutbox(dueBy: now(), limit: limit)
    }

    /// Every pending message whatever its schedule, oldest first, at most `limit`.
    public func pendingOutbox(limit: Int) async throws(HearthError) -> [OutboxMessage] {
        try await storage.pendingOutbox(dueBy: Timestamp(microseconds: .max), limit: limit)
    }

    /// Dead messages, oldest first.
    public func deadOutbox(limit: Int) async throws(HearthError) -> [OutboxMessage] {
        try await storage.deadOutbox(limit: limit)
    }

    /// Records a failed attempt or a message given up on; false if it is gone.
    @discardableResult
    public func recordOutboxDelivery(id: String, _ delivery: OutboxMessage.Delivery) async throws(HearthError) -> Bool {
        try await storage.updateOutboxDelivery(id: id, delivery)
    }

    /// Forgets a delivered message, so it is never sent again.
    public func outboxDelivered(id: String) async throws(HearthError) {
        try await storage.deleteOutbox(id: id)
    }

    /// Makes dead messages pending again, to be tried at once with a fresh count of attempts: the one with
    /// `id`, or every dead one when `id` is nil. Answers the ids made pending (none if `id` is unknown or
    /// not dead).
    public func retryDeadOutbox(id: String?) async throws(HearthError) -> [String] {
        var retried: [String] = []
        for message in try await storage.deadOutbox(limit: Int.max) where id == nil || message.id == id {
            let fresh = OutboxMessage.Delivery(attempts: 0, nextAttemptAt: now(), lastError: message.delivery.lastError, deadAt: nil)
            if try await storage.updateOutboxDelivery(id: message.id, fresh) { retried.append(message.id) }
        }
        return retried
    }
}

extension OutboxMessage {
    /// The message as `GET /v1/admin/outbox` and `hearth outbox list` show it: never its token or body.
    public var adminJSON: JSON {
        var fields: [(String, JSON)] = [
            ("id", .string(id)), ("purpose", .string(purpose.rawValue)), ("to", .string(to)),
            ("attempts", .int(Int64(delivery.attempts))), ("lastError", delivery.lastError.map { .string($0) } ?? .null),
            ("createdAt", .string(createdAt.rfc3339)),
        ]
        if !uid.isEmpty { fields.append(("uid", .string(uid))) }
        if let subject = email?.subject { fields.append(("subject", .string(subject))) }
        if let dead = delivery.deadAt {
            fields.append(("deadAt", .string(dead.rfc3339)))
        } else {
            fields.append(("nextAttemptAt", .string(delivery.nextAttemptAt.rfc3339)))
        }
        return .object(fields)
    }
}
