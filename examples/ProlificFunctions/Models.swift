import Foundation

/// A thread as Prolific stores it (`projects/{projectId}`, docs/apps/prolific.md), the fields closing reads.
struct Project: Codable, Sendable {
    var story: [String]
    var currentRound: Int
    var isComplete: Bool
    /// How long each round lasts, in hours.
    var roundHours: Int
}

/// A round (`projects/{projectId}/rounds/{n}`): open until `closesAt`, which the owner may move.
struct Round: Codable, Sendable {
    var number: Int
    var isComplete: Bool
    var closesAt: Date
}

/// A snippet of a round. `votes` is its vote count, which the rules keep equal to its vote documents.
struct Snippet: Codable, Sendable {
    var author: String
    var text: String
    var votes: Int
    var createdAt: Date
    /// The author marked it as an ending: if it wins, the story ends with it.
    var ending: Bool?
}
