extension ChangeFeed {
    /// What the feed holds, counted by `run`'s loop in its turn (so only while it runs). Once every connection
    /// has ended and its loads are done, it is `empty` (but for the revocation subscription's task): nothing
    /// of a closed connection or of a dropped target is kept.
    package func census() async -> Census {
        await withCheckedContinuation { reply in send(.census(reply)) }
    }

    /// The feed's bookkeeping, counted (`census`).
    package struct Census: Sendable, Equatable, CustomStringConvertible {
        /// Connections the loop tracks.
        package var connections = 0
        /// Targets of those connections.
        package var targets = 0
        /// Views open.
        package var views = 0
        /// Listeners of those views.
        package var subscribers = 0
        /// Views listed for sharing by their query.
        package var sharedViews = 0
        /// Keys of the indexes that find views by document, collection and collection group.
        package var indexKeys = 0
        /// `ListenConnection` objects not yet freed, tracked or not: more than `connections` for long means
        /// something holds connections that ended.
        package var connectionObjects = 0
        /// Whether the loop's task group holds a task: a load, look-up or check under way, or the subscription
        /// to revocations while the feed has a hub.
        package var holdsTasks = false

        package static let empty = Census()

        package var description: String {
            "connections \(connections), targets \(targets), views \(views), subscribers \(subscribers), "
                + "shared views \(sharedViews), index keys \(indexKeys), connection objects \(connectionObjects), "
                + "holds tasks \(holdsTasks)"
        }
    }
}
