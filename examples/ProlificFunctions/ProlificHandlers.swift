import Foundation
import HearthCore
import HearthFunctions

/// Prolific's functions (docs/apps/prolific.md), apart from `main.swift` so the tests serve the same ones.
enum ProlificHandlers {
    struct NoToken: Error, CustomStringConvertible {
        var description: String { "the event carries no token: declare an identity for the endpoint in the functions file" }
    }

    /// The handlers, reading from the Hearth server at `hearth`.
    static func functions(hearth: URL) -> Functions {
        var functions = Functions()
        // The `roundCloses` timer of the functions file fires when a round's `closesAt` passes.
        functions.onTimer("roundCloses") { event in try await closeRound(event, hearth: hearth) }
        // The `roundClosed` trigger: the close committed, its winner goes to the thread's followers.
        functions.onDocumentUpdated("projects/{projectId}/rounds/{roundId}", name: "roundClosed") { event in
            try await Followers.tell(event, hearth: hearth)
        }
        // The `snippetLiked` trigger: a vote was cast, its snippet's author hears of it.
        functions.onDocumentCreated("projects/{projectId}/rounds/{roundId}/snippets/{snippetId}/votes/{voterId}", name: "snippetLiked") { event in
            try await Likes.tell(event, hearth: hearth)
        }
        return functions
    }

    /// Closes the round the timer fired for: its answer's writes commit once, with the event's delivery.
    static func closeRound(_ event: FunctionEvent, hearth: URL) async throws -> [FunctionWrite] {
        guard let projectID = event.params["projectId"], let roundID = event.params["roundId"],
              let document = event.document?.after else { return [] }  // the round was deleted meanwhile
        let round = try document.data(as: Round.self)
        // Closed already, or its time moved later (the new time fires on its own): nothing to do.
        guard !round.isComplete, let time = event.time, case .timestamp(let closesAt)? = document.fields["closesAt"],
              closesAt <= time else { return [] }
        guard let token = event.auth?.token else { throw NoToken() }
        let reader = ThreadReader(url: hearth, token: token)
        // A delivery repeated after the close finds the thread moved on, and writes nothing.
        guard let (project, projectUpdateTime) = try await reader.project(projectID),
              !project.isComplete, project.currentRound == round.number else { return [] }
        let snippets = try await reader.snippets(projectID, round: roundID)
        // The next round lasts `roundHours` from now, or from the closing time if the clock is behind it.
        let opening = max(Date(), round.closesAt)
        return RoundClosing.writes(projectID: projectID, round: round, roundUpdateTime: document.updateTime, project: project,
                                   projectUpdateTime: projectUpdateTime, snippets: snippets, opening: opening)
    }
}
