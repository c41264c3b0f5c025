/// Who a push notification goes to (`POST /v1/push/send`'s `to`).
public enum PushRecipient: Sendable, Equatable {
    /// Every device the user registered.
    case user(String)
    /// One device, by the id its registration answered.
    case device(String)
    /// Every device subscribed to the topic.
    case topic(String)
}
