import Foundation
import HearthCore
import HearthFunctions
import HearthTesting
import Testing
@testable import prolific_functions

/// What Prolific's closing function decides, without a server: the winner of a round's snippets, and the
/// writes of the closing commit (as the JSON answer Hearth reads).
struct RoundClosingTests {
    struct WinnerCase: CustomTestStringConvertible, Sendable {
        let what: String
        /// id, votes, submitted (seconds after the round opened)
        let snippets: [(String, Int, Double)]
        let winner: String?
        var testDescription: String { what }
    }

    static let winnerCases: [WinnerCase] = [
        WinnerCase(what: "no snippets: no winner", snippets: [], winner: nil),
        WinnerCase(what: "one snippet without votes wins", snippets: [("a", 0, 5)], winner: "a"),
        WinnerCase(what: "the most votes win", snippets: [("a", 1, 1), ("b", 3, 2), ("c", 2, 3)], winner: "b"),
        WinnerCase(what: "a tie goes to the earliest submitted", snippets: [("a", 2, 9), ("z", 2, 1), ("m", 1, 0)], winner: "z"),
        WinnerCase(what: "a tie at the same time goes to the smaller id", snippets: [("b", 2, 4), ("a", 2, 4)], winner: "a"),
        WinnerCase(what: "all without votes: the earliest submitted", snippets: [("b", 0, 7), ("c", 0, 3), ("a", 0, 8)], winner: "c"),
    ]

    static func snippets(_ rows: [(String, Int, Double)], ending: String? = nil) -> [(id: String, snippet: Snippet)] {
        let opened = Date(timeIntervalSince1970: 1_790_000_000)
        return rows.map { id, votes, after in
            (id, Snippet(author: "u-\(id)", text: "text \(id)", votes: votes, createdAt: opened.addingTimeInterval(after),
                         ending: id == ending ? true : nil))
        }
    }

    @Test(arguments: winnerCases) func theWinner(_ row: WinnerCase) {
        #expect(RoundClosing.winner(of: Self.snippets(row.snippets))?.id == row.winner)
    }

    static let roundTime = Timestamp(microseconds: 1_790_000_000_000_001)
    static let projectTime = Timestamp(microseconds: 1_790_000_000_000_002)

    /// The answer's writes as Hearth reads them.
    static func answer(_ snippets: [(id: String, snippet: Snippet)], opening: Date = Date(timeIntervalSince1970: 1_790_003_600)) throws -> [JSON] {
        let writes = RoundClosing.writes(projectID: "p1", round: Round(number: 3, isComplete: false, closesAt: opening),
                                         roundUpdateTime: roundTime,
                                         project: Project(story: ["Once.", "Twice."], currentRound: 3, isComplete: false, roundHours: 24),
                                         projectUpdateTime: projectTime, snippets: snippets, opening: opening)
        guard case .array(let list)? = try JSON.parse(String(decoding: FunctionWrite.answer(writes), as: UTF8.self))["writes"] else {
            throw ExpectationFailure("no writes")
        }
        return list
    }

    @Test func aWinnerClosesTheRoundExtendsTheStoryAndOpensTheNextRound() throws {
        let writes = try Self.answer(Self.snippets([("a", 1, 1), ("b", 2, 2)]))
        #expect(writes.count == 3)
        #expect(writes[0]["update"]?.stringValue == "projects/p1/rounds/3")
        #expect(writes[0]["data"]?["isComplete"] == .bool(true))
        #expect(writes[0]["data"]?["winner"]?.stringValue == "b")
        #expect(writes[0]["data"]?["winnerText"]?.stringValue == "text b")
        #expect(writes[0]["data"]?["winnerAuthor"]?.stringValue == "u-b")
        #expect(writes[0]["data"]?["closedAt"] == .object([("$serverTimestamp", .bool(true))]))
        #expect(writes[0]["precondition"]?["updateTime"]?.stringValue == Self.roundTime.rfc3339)
        #expect(writes[1]["update"]?.stringValue == "projects/p1")
        #expect(writes[1]["data"]?["story"] == .array([.string("Once."), .string("Twice."), .string("text b")]))
        #expect(writes[1]["data"]?["currentRound"] == .int(4))
        #expect(writes[1]["precondition"]?["updateTime"]?.stringValue == Self.projectTime.rfc3339)
        #expect(writes[2]["create"]?.stringValue == "projects/p1/rounds/4")
        #expect(writes[2]["data"]?["number"] == .int(4) && writes[2]["data"]?["isComplete"] == .bool(false))
        // roundHours (24) after the opening time.
        #expect(writes[2]["data"]?["closesAt"] == .object([("$timestamp", .string("2026-09-22T15:13:20.000000Z"))]),
                "\(String(describing: writes[2]["data"]?["closesAt"]))")
    }

    @Test func noSnippetsCloseTheRoundWithoutAWinnerAndLeaveTheStory() throws {
        let writes = try Self.answer([])
        #expect(writes.count == 3)
        #expect(writes[0]["data"]?["isComplete"] == .bool(true) && writes[0]["data"]?["winner"] == nil)
        #expect(writes[1]["data"]?["story"] == nil && writes[1]["data"]?["currentRound"] == .int(4))
        #expect(writes[2]["create"]?.stringValue == "projects/p1/rounds/4")
    }

    /// docs/functions-swift.md shows the example's files as they are.
    @Test func theDocumentationShowsTheExampleAsItIs() throws {
        let guide = try String(contentsOfFile: Harness.projectFile("docs/functions-swift.md"), encoding: .utf8)
        for (file, fence) in [("ProlificHandlers.swift", "swift"), ("main.swift", "swift"), ("functions.json", "json")] {
            let text = try String(contentsOfFile: Harness.projectFile("examples/ProlificFunctions/" + file), encoding: .utf8)
            #expect(guide.contains("```\(fence)\n" + text + "```"), "docs/functions-swift.md and \(file) differ")
        }
    }

    @Test func anEndingThatWinsCompletesTheThreadWithNoNextRound() throws {
        let writes = try Self.answer(Self.snippets([("a", 2, 1), ("b", 1, 2)], ending: "a"))
        #expect(writes.count == 2)
        #expect(writes[1]["data"]?["isComplete"] == .bool(true))
        #expect(writes[1]["data"]?["currentRound"] == nil)
        #expect(writes[1]["data"]?["story"] == .array([.string("Once."), .string("Twice."), .string("text a")]))
        // An ending that loses changes nothing.
        #expect(try Self.answer(Self.snippets([("a", 1, 1), ("b", 2, 2)], ending: "a")).count == 3)
    }
}
