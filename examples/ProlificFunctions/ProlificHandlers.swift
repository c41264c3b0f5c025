import Foundation
import HearthCore
import HearthFunctions

/// A round of a thread, as the app stores it.
struct Round: Codable {
    var title: String
    var closesAt: Date?
    var status: String?
}

/// The handlers of docs/functions-swift.md, apart from `main.swift` so the tests serve the same ones.
enum ProlificHandlers {
    static func functions() -> Functions {
        var functions = Functions()

        // Every write of a round keeps its thread's summary: how many rounds were opened, and the latest one.
        functions.onDocumentWritten("threads/{threadId}/rounds/{roundId}") { event in
            guard let threadID = event.params["threadId"], let roundID = event.params["roundId"] else { return [] }
            guard let after = event.document?.after else { return [] }  // deleted: nothing to count
            let round = try after.data(as: Round.self)
            var summary: [String: FieldValue] = ["latestRound": .value(.string(roundID)), "latestTitle": .value(.string(round.title))]
            // Only a creation counts; the answer's writes commit once however often the event is delivered.
            if event.document?.before == nil { summary["rounds"] = .increment(1) }
            return [.set("threads/\(threadID)", summary, merge: true)]
        }

        // The timer of the functions file fires when a round's `closesAt` passes.
        functions.onTimer("roundCloses") { event in
            guard let path = event.document?.path else { return [] }
            return [.update(path, ["status": "closed", "closedAt": .serverTimestamp])]
        }
        return functions
    }
}
