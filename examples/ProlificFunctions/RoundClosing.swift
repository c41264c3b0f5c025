import Foundation
import HearthCore
import HearthFunctions

/// What closing a round writes, decided from the round, its thread and its snippets as read.
enum RoundClosing {
    /// The most-voted snippet; a tie goes to the one submitted first (then the smaller id). Nil with no snippets.
    static func winner(of snippets: [(id: String, snippet: Snippet)]) -> (id: String, snippet: Snippet)? {
        snippets.min { a, b in
            if a.snippet.votes != b.snippet.votes { return a.snippet.votes > b.snippet.votes }
            if a.snippet.createdAt != b.snippet.createdAt { return a.snippet.createdAt < b.snippet.createdAt }
            return a.id < b.id
        }
    }

    /// The writes of one commit: round n closed with its winner, the winner appended to the story, and round
    /// n + 1 opened for `roundHours` from `opening` (or the thread completed, when the winner is an ending).
    /// A round without snippets closes with no winner and the story unchanged. Both documents must be as read.
    static func writes(projectID: String, round: Round, roundUpdateTime: Timestamp, project: Project,
                       projectUpdateTime: Timestamp, snippets: [(id: String, snippet: Snippet)], opening: Date) -> [FunctionWrite] {
        let projectPath = "projects/\(projectID)"
        let n = round.number
        var closed: [String: FieldValue] = ["isComplete": true, "closedAt": .serverTimestamp]
        var thread: [String: FieldValue] = ["updatedAt": .serverTimestamp]
        let winner = winner(of: snippets)
        if let winner {
            closed["winner"] = .value(.string(winner.id))
            closed["winnerText"] = .value(.string(winner.snippet.text))
            closed["winnerAuthor"] = .value(.string(winner.snippet.author))
            thread["story"] = .value(.array((project.story + [winner.snippet.text]).map(Value.string)))
        }
        var writes: [FunctionWrite] = [
            .update("\(projectPath)/rounds/\(n)", closed).precondition(.updateTime(roundUpdateTime)),
        ]
        if winner?.snippet.ending == true {
            thread["isComplete"] = true
            writes.append(.update(projectPath, thread).precondition(.updateTime(projectUpdateTime)))
            return writes
        }
        thread["currentRound"] = .value(.int(Int64(n + 1)))
        writes.append(.update(projectPath, thread).precondition(.updateTime(projectUpdateTime)))
        let closesAt = opening.addingTimeInterval(TimeInterval(project.roundHours) * 3600)
        writes.append(.create("\(projectPath)/rounds/\(n + 1)", [
            "number": .value(.int(Int64(n + 1))), "isComplete": false, "openedAt": .serverTimestamp,
            "closesAt": .timestamp(closesAt),
        ]))
        return writes
    }
}
