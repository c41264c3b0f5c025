import HearthCore

/// Where push devices, their topics and the queue of notifications live (beside the accounts, in the same
/// file and commits). Device tokens are stored sealed (`OutboxSeal`) and looked up by their SHA-256, so the
/// file alone holds no token in clear; the server opens them only to send.
public protocol PushStorage: Sendable {
    /// Stores a registration. A token already registered (by this account or another: a phone changes
    /// hands, or another user signs in on it) keeps its row and id, now owned by `device.uid`; it keeps its
    /// topics only if the owner did not change. Answers the stored device.
    func registerDevice(_ device: PushDevice) async throws(HearthError) -> PushDevice
    /// The device with this id, its token opened; nil if none (or its token no longer opens).
    func device(id: String) async throws(HearthError) -> PushDevice?
    /// An account's devices, oldest first.
    func devices(uid: String) async throws(HearthError) -> [PushDevice]
    /// The devices subscribed to a topic, oldest first.
    func devices(topic: String) async throws(HearthError) -> [PushDevice]
    /// Deletes a device with its topics and its queued notifications; false if there was none.
    func deleteDevice(id: String) async throws(HearthError) -> Bool
    /// Deletes every device of an account (the account is deleted).
    func deleteDevices(uid: String) async throws(HearthError)
    /// Subscribes a device to a topic or unsubscribes it; false if the device is gone.
    func setTopic(_ topic: String, deviceID: String, subscribed: Bool) async throws(HearthError) -> Bool
    /// Queues notifications, all or none.
    func enqueuePush(_ messages: [PushMessage]) async throws(HearthError)
    /// Queues notifications under a sender's key, as `AuthStorage.enqueueOutbox(_:key:at:)` does messages.
    func enqueuePush(_ messages: [PushMessage], key: SendKey, at time: Timestamp) async throws(HearthError) -> [String]
    /// The oldest pending (not dead) notifications due by `time`, at most `limit`.
    func pendingPush(dueBy time: Timestamp, limit: Int) async throws(HearthError) -> [PushMessage]
    /// The oldest dead notifications, at most `limit`.
    func deadPush(limit: Int) async throws(HearthError) -> [PushMessage]
    /// Records a notification's delivery state; false if it is gone.
    func updatePushDelivery(id: String, _ delivery: OutboxMessage.Delivery) async throws(HearthError) -> Bool
    /// Removes a delivered notification.
    func deletePush(id: String) async throws(HearthError)
}
