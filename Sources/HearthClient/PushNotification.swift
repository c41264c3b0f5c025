/// What a push notification shows: a title, a body or both.
public struct PushNotification: Sendable, Equatable {
    /// The title shown.
    public var title: String?
    /// The text shown under the title.
    public var body: String?

    /// A notification with a title, a body or both.
    public init(title: String? = nil, body: String? = nil) {
        self.title = title
        self.body = body
    }
}
