import Foundation
import HearthClient
import HearthCore
import HearthFunctions

/// The push that brings a thread's followers back: when a round closes with a winner (the `roundClosed`
/// trigger of the functions file), each user who follows the thread is told the new line.
enum Followers {
    /// Pushes the winning line to each follower of the thread. Each push is keyed by the event and the
    /// follower, so a delivery retried after some pushes went out sends nobody a second one. A round closed
    /// without a winner, or an update that is not the close, tells nobody.
    static func tell(_ event: FunctionEvent, hearth url: URL) async throws {
        guard let projectID = event.params["projectId"], let roundID = event.params["roundId"],
              let before = event.document?.before, let after = event.document?.after,
              before.fields["isComplete"] == .bool(false), after.fields["isComplete"] == .bool(true),
              case .string(let line)? = after.fields["winnerText"] else { return }
        guard let token = event.auth?.token else { throw ProlificHandlers.NoToken() }
        let hearth = Hearth(url: url, token: token)
        // The rules let the functions' identity list follows only by the thread they name.
        let follows = try await hearth.collectionGroup("following").whereField("project", isEqualTo: projectID).getDocuments()
        for follow in follows.documents {
            // users/<uid>/following/<projectId>
            let uid = follow.reference.path.split(separator: "/")[1]
            var title = "A thread you follow"
            if case .string(let followed)? = follow.data()?["title"] { title = followed }
            try await hearth.sendPush(to: .user(String(uid)), notification: PushNotification(title: title, body: line),
                                      data: ["project": projectID, "round": roundID], idempotencyKey: "\(event.id):\(uid)")
        }
    }
}
