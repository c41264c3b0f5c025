import Foundation
import HearthCore
import HearthFunctions

/// Publishing: the `publishPost` timer fires when a post's `scheduledAt` passes; the post goes to each of its
/// networks, then the answer marks it published (committed once with the event's delivery).
struct Publisher: Sendable {
    let settings: BlueAvalancheSettings

    func publish(_ event: FunctionEvent) async throws -> [FunctionWrite] {
        guard let postID = event.params["postId"] else { return [] }
        guard let token = event.auth?.token else {
            throw ServiceError(description: "the event carries no token: give the endpoint an identity in functions.json")
        }
        let reader = AppReader(settings, token: token)
        // Decide with the post as it is now, not as the timer saw it: an event retried after the author deleted
        // or rescheduled the post (a new time re-arms the timer), or after it was published, does nothing.
        guard let post = try await reader.post(postID), post.status == "scheduled",
              let due = post.scheduledAt, due == event.time else { return [] }
        let network = NetworkClient(settings: settings)
        var published: [String] = []
        for name in post.networks {
            // A network disconnected since the post was written is skipped; the others still get the post.
            guard let outlet = try await reader.outlet(of: post.author, on: name) else { continue }
            // A failure throws: nothing is marked and the event comes again; the networks that took the post
            // already see the same idempotency key and do not post it twice.
            try await network.publish(post, to: outlet, idempotencyKey: event.id)
            published.append(name)
        }
        let path = "posts/\(postID)"
        guard !published.isEmpty else {
            return [.update(path, ["status": "failed", "failure": "none of the post's networks is connected any more",
                                   "updatedAt": .serverTimestamp])]
        }
        return [.update(path, ["status": "published", "publishedAt": .serverTimestamp,
                               "publishedTo": .value(.array(published.map(Value.string)))])]
    }
}
