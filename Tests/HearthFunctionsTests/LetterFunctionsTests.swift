import Foundation
import HearthCore
import HearthFunctions
import HearthTesting
import Testing
@testable import letter_functions

/// Letter's "new reply" function (examples/LetterFunctions) end to end: Hearth with Letter's rules, fixtures and
/// functions file, the handlers served on loopback, APNs and FCM on loopback; what each service received.
@Suite(.serialized) struct LetterFunctionsTests {
    static func with(_ body: (AppFunctionsRig) async throws -> Void) async throws {
        try await AppFunctionsRig.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json", indexes: "indexes/letter.json",
                                       functionsFile: "examples/LetterFunctions/functions.json",
                                       handlers: { LetterHandlers.functions(hearth: $0) }, body)
    }

    static func reply(_ text: String, fromAuthor: Bool? = nil) -> String {
        var fields: [(String, JSON)] = [("content", .string(text)), ("createdAt", .object([("$serverTimestamp", .bool(true))])),
                                        ("report", .bool(false))]
        if let fromAuthor { fields.append(("fromAuthor", .bool(fromAuthor))) }
        return JSON.object(fields).text
    }

    /// erin wrote "Back pain at 25" (the fixture's index says so, and nothing else does).
    static let erinsLetter = "0W6GIBR4tYqrU1DnouZf"

    @Test func aReplyNotifiesTheLettersAuthorAndNobodyElse() async throws {
        try await Self.with { rig in
            let (_, erin) = try await rig.hearth.signIn("erin")
            let (bobClient, bob) = try await rig.hearth.signIn("bob")
            let erinsPhone = PushTestRig.apnsToken()
            let bobsPhone = PushTestRig.fcmToken()
            _ = try await rig.register(erin, token: erinsPhone, platform: "apns")
            _ = try await rig.register(bob, token: bobsPhone, platform: "fcm")

            let replied = try await bobClient.post("/v1/docs/letters/\(Self.erinsLetter)/replies", Self.reply("Stretch every hour."))
            #expect(replied.status == 201, "\(replied.text)")
            let replyID = try #require(replied.json?["id"]?.stringValue)
            let quiet = try await rig.settled()
            #expect(quiet.events.isEmpty && quiet.push.isEmpty, "\(quiet)")

            let received = rig.push.apns.received
            #expect(received.count == 1 && rig.push.fcm.received.isEmpty)
            let push = try #require(received.first)
            #expect(push.token == erinsPhone)
            #expect(push.body["aps"]?["alert"]?["title"]?.stringValue == "New reply")
            #expect(push.body["aps"]?["alert"]?["body"]?.stringValue == "Someone replied to your letter \u{201C}Back pain at 25\u{201D}")
            #expect(push.body["letter"]?.stringValue == Self.erinsLetter && push.body["reply"]?.stringValue == replyID)
            // Nothing in the push names the replier.
            #expect(!push.body.text.contains("bob"))

            // erin answers on her own letter: marked as the author's, it notifies nobody.
            let (erinClient, _) = try await rig.hearth.signIn("erin")
            let own = try await erinClient.post("/v1/docs/letters/\(Self.erinsLetter)/replies", Self.reply("Thanks!", fromAuthor: true))
            #expect(own.status == 200 || own.status == 201, "\(own.text)")
            // Without the mark her reply is refused: she cannot notify herself by leaving it out.
            #expect(try await erinClient.post("/v1/docs/letters/\(Self.erinsLetter)/replies", Self.reply("Thanks!")).status == 403)
            let after = try await rig.settled()
            #expect(after.events.isEmpty && after.push.isEmpty)
            #expect(rig.push.apns.received.count == 1 && rig.push.fcm.received.isEmpty)
            await bobClient.close()
            await erinClient.close()
        }
    }

    /// A letter written now (letter and index entry in one commit, as the app does) finds its author too.
    @Test func aNewLettersAuthorIsFound() async throws {
        try await Self.with { rig in
            let (bobClient, bob) = try await rig.hearth.signIn("bob")
            let (carolClient, _) = try await rig.hearth.signIn("carol")
            let bobsPhone = PushTestRig.fcmToken()
            _ = try await rig.register(bob, token: bobsPhone, platform: "fcm")
            let id = makeAutoID()
            let now = #"{"$serverTimestamp": true}"#
            let commit = """
                {"writes": [{"create": "letters/\(id)", "data": {"category": "work", "title": "Too many meetings", "content": "Help.", "createdAt": \(now)}},
                            {"create": "users/\(bob.uid)/letters/\(id)", "data": {"title": "Too many meetings", "category": "work", "createdAt": \(now)}}]}
                """
            #expect(try await bobClient.post("/v1/commit", commit).status == 200)
            #expect(try await carolClient.post("/v1/docs/letters/\(id)/replies", Self.reply("Decline some.")).status < 300)
            let quiet = try await rig.settled()
            #expect(quiet.events.isEmpty && quiet.push.isEmpty, "\(quiet)")
            let received = rig.push.fcm.received
            #expect(received.count == 1 && rig.push.apns.received.isEmpty)
            #expect(received.first?.token == bobsPhone)
            #expect(received.first?.message["notification"]?["body"]?.stringValue == "Someone replied to your letter \u{201C}Too many meetings\u{201D}")
            #expect(received.first?.message["data"]?["letter"]?.stringValue == id)
            await bobClient.close()
            await carolClient.close()
        }
    }

    /// An author with no device: the send queues nothing (`200 {"queued": []}`), the event is handled, not
    /// retried, and nothing reaches either service.
    @Test func anAuthorWithNoDeviceGetsNothingAndTheEventIsDone() async throws {
        try await Self.with { rig in
            let (bobClient, _) = try await rig.hearth.signIn("bob")
            // alice wrote "Burned out at 26" and has registered no device.
            #expect(try await bobClient.post("/v1/docs/letters/JnaC46OYz3wBLHaPhbca/replies", Self.reply("Take a week off.")).status < 300)
            let quiet = try await rig.settled()
            #expect(quiet.events.isEmpty && quiet.push.isEmpty, "\(quiet)")
            #expect(rig.push.apns.received.isEmpty && rig.push.fcm.received.isEmpty)
            await bobClient.close()
        }
    }
}
