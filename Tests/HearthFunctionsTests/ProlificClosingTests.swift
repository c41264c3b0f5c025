import Foundation
import HearthCore
import HearthFunctions
import HearthMail
import HearthServer
import HearthTesting
import Logging
import ServiceLifecycle
import Testing
@testable import prolific_functions

/// Prolific's closing function end to end: Hearth with the app's rules and fixtures fires the `roundCloses`
/// timer on a clock the test moves, and delivers it to the app's handler served by a `FunctionsServer`, which
/// reads the thread with the event's token and answers the closing writes.
@Suite(.serialized) struct ProlificClosingTests {
    static let now = #"{"$serverTimestamp": true}"#

    /// The events the handler saw, with the writes it decided; `failFirst` fails each event's first attempt
    /// after deciding, so Hearth delivers it again.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [(event: FunctionEvent, writes: Int)] = []
        func add(_ event: FunctionEvent, writes: Int) -> Int {
            lock.withLock {
                seen.append((event, writes))
                return seen.filter { $0.event.id == event.id }.count
            }
        }
        var all: [(event: FunctionEvent, writes: Int)] { lock.withLock { seen } }
    }

    struct NotYet: Error {}

    /// Runs `body` with Hearth serving Prolific on `clock` and the app's functions service, both on loopback.
    static func with(clock: ManualClock, log: Log, failFirst: Bool = false,
                     _ body: (Harness, URL) async throws -> Void) async throws {
        let secret = FunctionsEndToEndTests.secret()
        let port = try LoopbackPort.unused()
        let file = TestFolders.make() + "/functions.json"
        try """
            {"endpoints": {"app": {"url": "http://127.0.0.1:\(port)/hooks", "secret": "\(secret)", "identity": {"uid": "functions"}}},
             "timers": [{"name": "roundCloses", "path": "projects/{projectId}/rounds/{roundId}", "field": "closesAt", "endpoint": "app"}]}
            """.write(toFile: file, atomically: true, encoding: .utf8)
        try await Harness.with(rules: "rules/prolific.rules", fixtures: "fixtures/prolific.json", indexes: "indexes/prolific.json",
                               configure: { configuration in
            configuration.useFunctions(file: file)
            configuration.functionsClock = clock.function
        }) { hearth in
            let url = try #require(URL(string: "http://127.0.0.1:\(hearth.port)"))
            var functions = Functions()
            functions.onTimer("roundCloses") { event in
                let writes = try await ProlificHandlers.closeRound(event, hearth: url)
                if log.add(event, writes: writes.count) == 1 && failFirst { throw NotYet() }
                return writes
            }
            let server = try FunctionsServer(secret: secret, path: "/hooks", functions: functions)
            var logger = Logger(label: "prolific-functions-test")
            logger.logLevel = .warning
            let group = ServiceGroup(configuration: .init(services: [server.application(port: port, logger: logger)], logger: logger))
            let running = Task { try await group.run() }
            do {
                try await body(hearth, url)
            } catch {
                await group.triggerGracefulShutdown()
                _ = await running.result
                throw error
            }
            await group.triggerGracefulShutdown()
            _ = await running.result
        }
    }

    static func timestamp(_ clock: ManualClock, plus seconds: Int64) -> String {
        #"{"$timestamp": "\#(Timestamp(microseconds: clock.now.microseconds + seconds * 1_000_000).rfc3339)"}"#
    }

    /// alice's new thread, as the app composes it: the project and its round 1, closing `seconds` from the clock.
    static func startThread(_ hearth: Harness, _ alice: HearthClient, clock: ManualClock, closesIn seconds: Int64) async throws -> String {
        let project = "projects/" + makeAutoID()
        try hearth.expectAllowed(try await alice.post("/v1/commit", """
            {"writes": [
              {"create": "\(project)", "data": {"owner": "alice", "ownerName": "Alice", "title": "The keeper", "starter": "Once.",
               "story": ["Once."], "currentRound": 1, "isComplete": false, "roundHours": 48, "createdAt": \(now), "updatedAt": \(now)}},
              {"create": "\(project)/rounds/1", "data": {"number": 1, "isComplete": false, "openedAt": \(now),
               "closesAt": \(timestamp(clock, plus: seconds))}}]}
            """), "starting a thread")
        return project
    }

    /// A snippet of round 1 at a chosen id (so a tie cannot be decided by id order by accident).
    static func submit(_ hearth: Harness, _ client: HearthClient, _ uid: String, to project: String, id: String,
                       _ text: String) async throws -> String {
        let path = "\(project)/rounds/1/snippets/\(id)"
        try hearth.expectAllowed(try await client.put("/v1/docs/\(path)", """
            {"author": "\(uid)", "authorName": "\(uid)", "text": "\(text)", "votes": 0, "createdAt": \(now)}
            """), "submitting a snippet")
        return path
    }

    /// A like, as the app makes it: the count and the voter's vote document in one commit.
    static func vote(_ client: HearthClient, _ uid: String, _ snippet: String) async throws -> HTTPResult {
        try await client.post("/v1/commit", """
            {"writes": [{"update": "\(snippet)", "data": {"votes": {"$increment": 1}}},
                        {"create": "\(snippet)/votes/\(uid)", "data": {"votedAt": \(now)}}]}
            """)
    }

    static func closed(_ data: JSON?) -> Bool { data?["isComplete"] == .bool(true) }

    @Test func theMostVotedSnippetWinsAndIsAppendedOnceThoughDeliveredTwice() async throws {
        let clock = ManualClock()
        let log = Log()
        try await Self.with(clock: clock, log: log, failFirst: true) { hearth, url in
            let (alice, _) = try await hearth.signIn("alice")
            let (bob, _) = try await hearth.signIn("bob")
            let (carol, _) = try await hearth.signIn("carol")
            let (dave, _) = try await hearth.signIn("dave")
            let admin = hearth.client()
            let project = try await Self.startThread(hearth, alice, clock: clock, closesIn: 3600)
            let bobs = try await Self.submit(hearth, bob, "bob", to: project, id: "a1", "The ship had no crew.")
            let carols = try await Self.submit(hearth, carol, "carol", to: project, id: "b2", "The keeper lit the lamp.")
            _ = try await Self.submit(hearth, dave, "dave", to: project, id: "c3", "Nothing happened.")
            for (client, uid) in [(alice, "alice"), (dave, "dave")] {
                try hearth.expectAllowed(try await Self.vote(client, uid, carols), "\(uid) likes carol's snippet")
            }
            try hearth.expectAllowed(try await Self.vote(carol, "carol", bobs), "carol likes bob's snippet")

            clock.advance(seconds: 7200)
            let round = try await admin.document("\(project)/rounds/1", until: Self.closed)
            _ = try await admin.functionEvents("pending") { $0.isEmpty }
            #expect(round?["winner"]?.stringValue == "b2")
            #expect(round?["winnerText"]?.stringValue == "The keeper lit the lamp.")
            #expect(round?["winnerAuthor"]?.stringValue == "carol")
            #expect(round?["closedAt"] != nil)
            let thread = try await bob.get("/v1/docs/\(project)").json?["data"]
            #expect(thread?["story"] == .array([.string("Once."), .string("The keeper lit the lamp.")]))
            #expect(thread?["currentRound"] == .int(2))
            #expect(thread?["isComplete"] == .bool(false))
            let next = try await bob.get("/v1/docs/\(project)/rounds/2").json?["data"]
            #expect(next?["number"] == .int(2) && next?["isComplete"] == .bool(false), "\(String(describing: next))")
            // Round 2 lasts the thread's 48 hours from round 1's end (the handler's clock is behind the test's).
            let closesAt = try #require(next?["closesAt"]?["$timestamp"]?.stringValue.flatMap(Timestamp.init(rfc3339:)))
            #expect(abs(closesAt.microseconds - (clock.now.microseconds + 47 * 3600 * 1_000_000)) < 1000, "\(closesAt)")

            // Delivered twice (the first attempt decided the same writes, then failed): committed once.
            // (The fixture's closed rounds, whose times are past, fired too as it loaded; the handler left them.)
            let attempts = log.all.filter { $0.event.document?.path == "\(project)/rounds/1" }
            #expect(attempts.count == 2 && Set(attempts.map(\.event.id)).count == 1 && attempts.allSatisfy { $0.writes == 3 })
            // The same event once more, as after a crash: the thread has moved on, so the handler writes nothing.
            #expect(try await ProlificHandlers.closeRound(try #require(attempts.first?.event), hearth: url).isEmpty)
            #expect(try await admin.get("/v1/functions/events?state=dead").json?["events"] == .array([]))

            // The round is closed for everyone: votes and snippets after the close are refused by the rules.
            try hearth.expectDenied(try await Self.vote(bob, "bob", carols), "a vote after the close")
            try hearth.expectDenied(try await dave.post("/v1/docs/\(project)/rounds/1/snippets", """
                {"author": "dave", "authorName": "dave", "text": "Late.", "votes": 0, "createdAt": \(Self.now)}
                """), "a snippet after the close")
            #expect(try await bob.get("/v1/docs/\(carols)").json?["data"]?["votes"] == .int(2))
            for client in [alice, bob, carol, dave, admin] { await client.close() }
        }
    }

    @Test func aTieGoesToTheSnippetSubmittedFirst() async throws {
        let clock = ManualClock()
        try await Self.with(clock: clock, log: Log()) { hearth, _ in
            let (alice, _) = try await hearth.signIn("alice")
            let (bob, _) = try await hearth.signIn("bob")
            let (carol, _) = try await hearth.signIn("carol")
            let admin = hearth.client()
            let project = try await Self.startThread(hearth, alice, clock: clock, closesIn: 3600)
            // bob's comes first but sorts last by id; both get one vote.
            let first = try await Self.submit(hearth, bob, "bob", to: project, id: "zz", "First in.")
            let second = try await Self.submit(hearth, carol, "carol", to: project, id: "aa", "Second in.")
            try hearth.expectAllowed(try await Self.vote(carol, "carol", first))
            try hearth.expectAllowed(try await Self.vote(bob, "bob", second))
            clock.advance(seconds: 3601)
            let round = try await admin.document("\(project)/rounds/1", until: Self.closed)
            #expect(round?["winner"]?.stringValue == "zz" && round?["winnerAuthor"]?.stringValue == "bob")
            #expect(try await admin.get("/v1/docs/\(project)").json?["data"]?["story"] == .array([.string("Once."), .string("First in.")]))
            for client in [alice, bob, carol, admin] { await client.close() }
        }
    }

    @Test func aRoundWithoutSnippetsClosesWithNoWinnerAndTheThreadGoesOn() async throws {
        let clock = ManualClock()
        try await Self.with(clock: clock, log: Log()) { hearth, _ in
            let (alice, _) = try await hearth.signIn("alice")
            let admin = hearth.client()
            let project = try await Self.startThread(hearth, alice, clock: clock, closesIn: 600)
            clock.advance(seconds: 601)
            let round = try await admin.document("\(project)/rounds/1", until: Self.closed)
            #expect(round?["winner"] == nil && round?["winnerText"] == nil && round?["closedAt"] != nil, "\(String(describing: round))")
            let thread = try await admin.get("/v1/docs/\(project)").json?["data"]
            #expect(thread?["story"] == .array([.string("Once.")]))
            #expect(thread?["currentRound"] == .int(2))
            #expect(try await admin.get("/v1/docs/\(project)/rounds/2").json?["data"]?["isComplete"] == .bool(false))
            _ = try await admin.functionEvents("pending") { $0.isEmpty }
            #expect(try await admin.get("/v1/functions/events?state=dead").json?["events"] == .array([]))
            for client in [alice, admin] { await client.close() }
        }
    }

    @Test func aRoundRetimedBeforeItsEndClosesAtTheNewTime() async throws {
        let clock = ManualClock()
        try await Self.with(clock: clock, log: Log()) { hearth, _ in
            let (alice, _) = try await hearth.signIn("alice")
            let (bob, _) = try await hearth.signIn("bob")
            let admin = hearth.client()
            // Two threads: one closes at +1 h, moved to +3 h by its owner; the other closes at +1.5 h, unmoved.
            let moved = try await Self.startThread(hearth, alice, clock: clock, closesIn: 3600)
            let probe = try await Self.startThread(hearth, alice, clock: clock, closesIn: 5400)
            _ = try await Self.submit(hearth, bob, "bob", to: moved, id: "s1", "Later than planned.")
            try hearth.expectDenied(try await bob.patch("/v1/docs/\(moved)/rounds/1", #"{"closesAt": \#(Self.timestamp(clock, plus: 10_800))}"#),
                                    "another user moving the closing time")
            try hearth.expectAllowed(try await alice.patch("/v1/docs/\(moved)/rounds/1", #"{"closesAt": \#(Self.timestamp(clock, plus: 10_800))}"#),
                                     "the owner moving the closing time")
            // Past the old time and the probe's: the probe closes (timers fire in time order), the moved round does not.
            clock.advance(seconds: 7200)
            _ = try await admin.document("\(probe)/rounds/1", until: Self.closed)
            _ = try await admin.functionEvents("pending") { $0.isEmpty }
            #expect(try await admin.get("/v1/docs/\(moved)/rounds/1").json?["data"]?["isComplete"] == .bool(false))
            #expect(try await admin.get("/v1/docs/\(moved)").json?["data"]?["currentRound"] == .int(1))
            // Past the new time: it closes, with its snippet appended.
            clock.advance(seconds: 7200)
            let round = try await admin.document("\(moved)/rounds/1", until: Self.closed)
            #expect(round?["winner"]?.stringValue == "s1")
            #expect(try await admin.get("/v1/docs/\(moved)").json?["data"]?["story"] == .array([.string("Once."), .string("Later than planned.")]))
            for client in [alice, bob, admin] { await client.close() }
        }
    }
}
