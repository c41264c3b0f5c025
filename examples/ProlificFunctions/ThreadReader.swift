import Foundation
import HearthClient
import HearthCore

/// Reads a thread and a round's snippets over Hearth's HTTP API with the event's identity token: the rules
/// let any signed-in identity read them, and nothing more is needed to close a round.
struct ThreadReader: Sendable {
    let hearth: Hearth

    init(url: URL, token: String) {
        hearth = Hearth(url: url, token: token)
    }

    /// The thread, with its update time (the closing commit requires it unchanged).
    func project(_ projectID: String) async throws -> (project: Project, updateTime: Timestamp)? {
        let snapshot = try await hearth.document("projects/\(projectID)").getDocument()
        guard snapshot.exists, let updateTime = snapshot.updateTime else { return nil }
        return (try snapshot.data(as: Project.self), updateTime)
    }

    /// Every snippet of the round, with its id. Votes are final: the rules refuse them once `closesAt` passed.
    func snippets(_ projectID: String, round roundID: String) async throws -> [(id: String, snippet: Snippet)] {
        let snapshot = try await hearth.collection("projects/\(projectID)/rounds/\(roundID)/snippets").getDocuments()
        return try snapshot.documents.map { ($0.documentID, try $0.data(as: Snippet.self)) }
    }
}
