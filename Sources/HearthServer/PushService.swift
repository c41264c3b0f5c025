import HearthAuth
import HearthCore

/// The push logic between the routes and `PushStorage`: a device belongs to the account that registered it,
/// and only that account (or the admin) deletes it or changes its topics; sending queues one notification per
/// device the target names, for `PushDeliveryService` to deliver.
struct PushService: Sendable {
    let storage: any PushStorage
    let now: @Sendable () -> Timestamp

    /// Registers a device for `uid`; answers it and whether it is new (the token was not registered).
    func register(uid: String, _ registration: PushRequests.Registration) async throws(HearthError) -> (PushDevice, Bool) {
        let proposed = PushDevice(id: makeAutoID(), uid: uid, platform: registration.platform, token: registration.token,
                                  topics: registration.topics, createdAt: now())
        let stored = try await storage.registerDevice(proposed)
        return (stored, stored.id == proposed.id)
    }

    /// The caller's device with this id; `not-found` for a device of another account too, so that ids do not
    /// reveal whose they are.
    func ownDevice(_ id: String, caller: Identity) async throws(HearthError) -> PushDevice {
        guard let device = try await storage.device(id: id), caller.isAdmin || device.uid == caller.uid else {
            throw .notFound("no device of yours has the id '\(id)'")
        }
        return device
    }

    func devices(uid: String) async throws(HearthError) -> [PushDevice] {
        try await storage.devices(uid: uid)
    }

    func delete(_ id: String, caller: Identity) async throws(HearthError) {
        let device = try await ownDevice(id, caller: caller)
        _ = try await storage.deleteDevice(id: device.id)
    }

    func setTopic(_ topic: String, device id: String, subscribed: Bool, caller: Identity) async throws(HearthError) -> PushDevice {
        let device = try await ownDevice(id, caller: caller)
        guard try await storage.setTopic(topic, deviceID: device.id, subscribed: subscribed),
              let updated = try await storage.device(id: device.id) else {
            throw .notFound("no device of yours has the id '\(id)'")
        }
        return updated
    }

    /// Queues the notification for every device the target names, in one commit; answers the queued ids
    /// (none when the user has no device or nobody is subscribed to the topic). A device id that does not
    /// exist is `not-found`.
    func send(_ request: PushRequests.Send, key: SendKey? = nil) async throws(HearthError) -> [String] {
        let devices: [PushDevice]
        switch request.target {
        case .uid(let uid): devices = try await storage.devices(uid: uid)
        case .topic(let topic): devices = try await storage.devices(topic: topic)
        case .device(let id):
            guard let device = try await storage.device(id: id) else { throw .notFound("no device has the id '\(id)'") }
            devices = [device]
        }
        let time = now()
        let messages = devices.map { PushMessage(id: makeAutoID(), deviceID: $0.id, content: request.content, createdAt: time) }
        if let key { return try await storage.enqueuePush(messages, key: key, at: time) }
        if !messages.isEmpty { try await storage.enqueuePush(messages) }
        return messages.map(\.id)
    }

    func pending(limit: Int) async throws(HearthError) -> [PushMessage] {
        try await storage.pendingPush(dueBy: Timestamp(microseconds: .max), limit: limit)
    }

    func dead(limit: Int) async throws(HearthError) -> [PushMessage] {
        try await storage.deadPush(limit: limit)
    }

    /// Makes dead notifications pending again (the one with `id`, or all), tried at once with a fresh count.
    func retryDead(id: String?) async throws(HearthError) -> [String] {
        var retried: [String] = []
        for message in try await storage.deadPush(limit: Int.max) where id == nil || message.id == id {
            let fresh = OutboxMessage.Delivery(attempts: 0, nextAttemptAt: now(), lastError: message.delivery.lastError, deadAt: nil)
            if try await storage.updatePushDelivery(id: message.id, fresh) { retried.append(message.id) }
        }
        return retried
    }
}
