import Foundation
import HearthCore
import HearthFunctions
import HearthTesting
import Testing
@testable import prolific_functions

/// Prolific's pushes (examples/ProlificFunctions): followers told of each new line (the `roundClosed` trigger),
/// authors told of each like (`snippetLiked`). Hearth with Prolific's rules, fixtures and functions file on a
/// clock the test moves, the app's handlers, APNs and FCM on loopback; what each device received.
@Suite(.serialized) struct ProlificFollowersTests {
    /// The app's handlers, the pushing ones failing their first attempt after they have pushed, so Hearth
    /// delivers the event again: the pushes are keyed, and nobody gets a second one.
    static func handlers(_ url: URL, attempts: Attempts) -> Functions {
        var functions = Functions()
        functions.onTimer("roundCloses") { event in try await ProlificHandlers.closeRound(event, hearth: url) }
        functions.onDocumentUpdated("projects/{projectId}/rounds/{roundId}", name: "roundClosed") { event -> [FunctionWrite] in
            try await Followers.tell(event, hearth: url)
            if attempts.count(event.id) == 1 { throw ProlificClosingTests.NotYet() }
            return []
        }
        functions.onDocumentCreated("projects/{projectId}/rounds/{roundId}/snippets/{snippetId}/votes/{voterId}",
                                    name: "snippetLiked") { event -> [FunctionWrite] in
            try await Likes.tell(event, hearth: url)
            if attempts.count(event.id) == 1 { throw ProlificClosingTests.NotYet() }
            return []
        }
        return functions
    }

    static func withApp(clock: ManualClock, attempts: Attempts, _ body: (AppFunctionsRig) async throws -> Void) async throws {
        try await AppFunctionsRig.with(rules: "rules/prolific.rules", fixtures: "fixtures/prolific.json", indexes: "indexes/prolific.json",
                                       functionsFile: "examples/ProlificFunctions/functions.json", clock: clock,
                                       handlers: { Self.handlers($0, attempts: attempts) }, body)
    }

    final class Attempts: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String: Int] = [:]
        func count(_ id: String) -> Int {
            lock.withLock {
                seen[id, default: 0] += 1
                return seen[id]!
            }
        }
        var total: Int { lock.withLock { seen.values.reduce(0, +) } }
    }

    static func follow(_ client: HearthClient, _ uid: String, _ project: String, title: String) async throws -> HTTPResult {
        let id = project.split(separator: "/")[1]
        return try await client.put("/v1/docs/users/\(uid)/following/\(id)", """
            {"title": "\(title)", "followedAt": \(ProlificClosingTests.now), "project": "\(id)"}
            """)
    }

    @Test func eachFollowerIsPushedTheWinningLineOnceAndNobodyElse() async throws {
        let clock = ManualClock()
        let attempts = Attempts()
        try await Self.withApp(clock: clock, attempts: attempts) { rig in
            let (alice, aliceSession) = try await rig.hearth.signIn("alice")
            let (bob, bobSession) = try await rig.hearth.signIn("bob")
            let (carol, carolSession) = try await rig.hearth.signIn("carol")
            let (dave, _) = try await rig.hearth.signIn("dave")
            let (bobsPhone, carolsPhone, alicesPhone) = (PushTestRig.apnsToken(), PushTestRig.fcmToken(), PushTestRig.apnsToken())
            _ = try await rig.register(bobSession, token: bobsPhone, platform: "apns")
            _ = try await rig.register(carolSession, token: carolsPhone, platform: "fcm")
            _ = try await rig.register(aliceSession, token: alicesPhone, platform: "apns")

            let project = try await ProlificClosingTests.startThread(rig.hearth, alice, clock: clock, closesIn: 3600)
            // bob and carol follow the thread; dave follows it with no device; alice (its owner) does not.
            for (client, uid) in [(bob, "bob"), (carol, "carol"), (dave, "dave")] {
                try rig.hearth.expectAllowed(try await Self.follow(client, uid, project, title: "The Lighthouse"), "\(uid) follows")
            }
            let snippet = try await ProlificClosingTests.submit(rig.hearth, dave, "dave", to: project, id: "d1", "The lamp went out.")
            try rig.hearth.expectAllowed(try await ProlificClosingTests.vote(bob, "bob", snippet))
            try await rig.settled()
            #expect(rig.push.apns.received.isEmpty && rig.push.fcm.received.isEmpty, "nothing before the close")

            clock.advance(seconds: 7200)
            _ = try await rig.admin.document("\(project)/rounds/1", until: ProlificClosingTests.closed)
            let quiet = try await rig.settled()
            #expect(quiet.events.isEmpty && quiet.push.isEmpty, "\(quiet)")
            #expect(attempts.total >= 2, "the followers' event was delivered again after its first attempt failed")

            let apns = rig.push.apns.received, fcm = rig.push.fcm.received
            #expect(apns.count == 1 && apns.first?.token == bobsPhone, "bob once; alice, who does not follow, never")
            #expect(fcm.count == 1 && fcm.first?.token == carolsPhone, "carol once")
            #expect(apns.first?.body["aps"]?["alert"]?["title"]?.stringValue == "The Lighthouse")
            #expect(apns.first?.body["aps"]?["alert"]?["body"]?.stringValue == "The lamp went out.")
            #expect(apns.first?.body["project"]?.stringValue == project.split(separator: "/")[1].description)
            #expect(fcm.first?.message["notification"]?["body"]?.stringValue == "The lamp went out.")

            // A user cannot list who follows the thread.
            let listed = try await bob.post("/v1/query", """
                {"from": {"collectionGroup": "following"}, "where": [["project", "==", "\(project.split(separator: "/")[1])"]]}
                """)
            #expect(listed.status == 403, "\(listed.text)")
            for client in [alice, bob, carol, dave] { await client.close() }
        }
    }

    @Test func anAuthorIsPushedEachLikeOnceAndNotTheirOwnNorATakenBackOne() async throws {
        let clock = ManualClock()
        let attempts = Attempts()
        try await Self.withApp(clock: clock, attempts: attempts) { rig in
            let (alice, _) = try await rig.hearth.signIn("alice")
            let (bob, _) = try await rig.hearth.signIn("bob")
            let (carol, carolSession) = try await rig.hearth.signIn("carol")
            let carolsPhone = PushTestRig.fcmToken()
            _ = try await rig.register(carolSession, token: carolsPhone, platform: "fcm")

            let project = try await ProlificClosingTests.startThread(rig.hearth, alice, clock: clock, closesIn: 3600)
            let snippet = try await ProlificClosingTests.submit(rig.hearth, carol, "carol", to: project, id: "c1", "The gulls fell silent.")
            for (client, uid) in [(bob, "bob"), (alice, "alice"), (carol, "carol")] {
                try rig.hearth.expectAllowed(try await ProlificClosingTests.vote(client, uid, snippet), "\(uid) likes it")
            }
            // bob takes his like back: a delete, which tells nobody.
            try rig.hearth.expectAllowed(try await bob.post("/v1/commit", """
                {"writes": [{"update": "\(snippet)", "data": {"votes": {"$increment": -1}}},
                            {"delete": "\(snippet)/votes/bob", "precondition": {"exists": true}}]}
                """), "bob takes it back")
            let quiet = try await rig.settled()
            #expect(quiet.events.isEmpty && quiet.push.isEmpty, "\(quiet)")
            #expect(attempts.total >= 6, "each like's event was delivered again after its first attempt failed")

            let fcm = rig.push.fcm.received
            #expect(fcm.count == 2 && fcm.allSatisfy { $0.token == carolsPhone }, "bob's and alice's likes, once each; not carol's own")
            let titles = Set(fcm.compactMap { $0.message["notification"]?["title"]?.stringValue })
            #expect(titles == ["Bob Okafor liked your line", "Alice Moreau liked your line"])
            #expect(fcm.allSatisfy { $0.message["notification"]?["body"]?.stringValue == "The gulls fell silent." })
            #expect(fcm.allSatisfy { $0.message["data"]?["snippet"]?.stringValue == "c1" })
            #expect(rig.push.apns.received.isEmpty)
            for client in [alice, bob, carol] { await client.close() }
        }
    }
}
