import Foundation
import HearthClient
import HearthCore
import HearthFunctions

/// The push that tells an author their line was liked (the `snippetLiked` trigger of the functions file): a
/// vote created on a snippet by anyone but its author.
enum Likes {
    /// Pushes the snippet's author who liked it. Keyed by the event, so a retried delivery pushes once; an
    /// author's vote for their own line, or a vote on a snippet gone meanwhile, tells nobody.
    static func tell(_ event: FunctionEvent, hearth url: URL) async throws {
        guard let projectID = event.params["projectId"], let roundID = event.params["roundId"],
              let snippetID = event.params["snippetId"], let voterID = event.params["voterId"] else { return }
        guard let token = event.auth?.token else { throw ProlificHandlers.NoToken() }
        let hearth = Hearth(url: url, token: token)
        let snippet = try await hearth.document("projects/\(projectID)/rounds/\(roundID)/snippets/\(snippetID)").getDocument()
        guard snippet.exists else { return }
        let liked = try snippet.data(as: Snippet.self)
        guard liked.author != voterID else { return }
        var voter = "Someone"
        if case .string(let name)? = try await hearth.document("users/\(voterID)").getDocument().data()?["displayName"] { voter = name }
        try await hearth.sendPush(to: .user(liked.author), notification: PushNotification(title: "\(voter) liked your line", body: liked.text),
                                  data: ["project": projectID, "round": roundID, "snippet": snippetID], idempotencyKey: event.id)
    }
}
