import Foundation
import HearthCore
import HearthFunctions
import HearthTesting
import Testing
@testable import comeover_functions

/// ComeOver's invitation function (examples/ComeOverFunctions) end to end: Hearth with ComeOver's rules, fixtures
/// and functions file, the handlers on loopback, APNs and FCM on loopback and a real SMTP server (aiosmtpd,
/// `bash Tests/peers/install.sh`); what each received, and that the cases that send nothing sent nothing.
@Suite(.serialized) struct ComeOverFunctionsTests {
    static func with(_ body: (AppFunctionsRig, SMTPTestServer) async throws -> Void) async throws {
        try await AppFunctionsRig.with(rules: "rules/comeover.rules", fixtures: "fixtures/comeover.json", indexes: "indexes/comeover.json",
                                       functionsFile: "examples/ComeOverFunctions/functions.json", smtp: true,
                                       handlers: { ComeOverHandlers.functions(hearth: $0) }) { rig in
            try await body(rig, try #require(rig.smtp))
        }
    }

    static let now = JSON.object([("$serverTimestamp", .bool(true))])

    /// nina's new event; answers its id.
    static func newEvent(_ nina: HearthClient, title: String) async throws -> String {
        let body = JSON.object([("author", .string("nina")), ("title", .string(title)), ("description", .string("Bring a dish.")),
                                ("startsAt", .object([("$timestamp", .string("2026-12-05T19:00:00Z"))])),
                                ("location", .string("Nina's kitchen")), ("createdAt", now), ("updatedAt", now)])
        let created = try await nina.post("/v1/docs/events", body.text)
        guard created.status == 201, let id = created.json?["id"]?.stringValue else {
            throw ExpectationFailure("the event was not created: \(created.status) \(created.text)")
        }
        return id
    }

    /// An invitation as the app adds it: at the invitee's uid for an account, else at an auto id.
    static func invite(_ nina: HearthClient, to event: String, name: String, uid: String? = nil, email: String? = nil) async throws -> HTTPResult {
        var fields: [(String, JSON)] = [("name", .string(name)), ("addedAt", now)]
        if let uid { fields.append(("uid", .string(uid))) }
        if let email { fields.append(("email", .string(email))) }
        let body = JSON.object(fields).text
        if let uid { return try await nina.put("/v1/docs/events/\(event)/invitations/\(uid)", body) }
        return try await nina.post("/v1/docs/events/\(event)/invitations", body)
    }

    struct Row: Sendable, CustomStringConvertible {
        var description: String
        var name: String
        var uid: String?
        var email: String?
    }

    /// Every kind of invitee, one invitation each; then exactly one push (omar's phone) and one email (zoe's)
    /// have left, and nothing else.
    @Test func eachInviteeIsToldTheWayTheyCanBe() async throws {
        try await Self.with { rig, smtp in
            let (nina, _) = try await rig.hearth.signIn("nina")
            let (_, omar) = try await rig.hearth.signIn("omar")
            let omarsPhone = PushTestRig.fcmToken()
            _ = try await rig.register(omar, token: omarsPhone, platform: "fcm")
            let mailBefore = smtp.received().count
            let event = try await Self.newEvent(nina, title: "Taco night")
            let rows: [Row] = [
                Row(description: "an account with a device: a push", name: "Omar Haddad", uid: "omar"),
                Row(description: "an account with no device: nothing reaches anyone", name: "Lena Fischer", uid: "lena"),
                Row(description: "an address and no account: an email", name: "Zoe", email: "zoe@example.com"),
                Row(description: "a name alone: nothing", name: "Grandma Rose"),
                // The rules take these (something@something) but mail does not: the send is refused with 400,
                // and the function acknowledges the event without sending.
                Row(description: "a non-ASCII address: nothing", name: "Zoë", email: "zoë@example.com"),
                Row(description: "an address with a line break: nothing", name: "Mallory", email: "ann@example.com\r\nX-Hack:1"),
                Row(description: "a domain without a dot: nothing", name: "Local", email: "root@localhost"),
            ]
            for row in rows {
                let added = try await Self.invite(nina, to: event, name: row.name, uid: row.uid, email: row.email)
                #expect(added.status == 200 || added.status == 201, "\(row): \(added.text)")
            }
            let quiet = try await rig.settled()
            #expect(quiet.events.isEmpty && quiet.push.isEmpty && quiet.mail.isEmpty, "\(quiet)")

            let pushes = rig.push.fcm.received
            #expect(pushes.count == 1 && rig.push.apns.received.isEmpty, "\(pushes.map(\.message))")
            #expect(pushes.first?.token == omarsPhone)
            #expect(pushes.first?.message["notification"]?["title"]?.stringValue == "You're invited")
            #expect(pushes.first?.message["notification"]?["body"]?.stringValue == "Nina Petrova invites you to Taco night")
            #expect(pushes.first?.message["data"]?["event"]?.stringValue == event)

            let mail = Array(smtp.received().dropFirst(mailBefore))
            #expect(mail.count == 1, "\(mail.map(\.to))")
            let message = try #require(mail.first)
            #expect(message.to == ["zoe@example.com"])
            #expect(message.header("Subject") == "Nina Petrova invites you to Taco night")
            #expect(message.decodedBody.contains("Hello Zoe,"))
            #expect(message.decodedBody.contains("Nina Petrova invites you to Taco night."))
            #expect(message.decodedBody.contains("When: 2026-12-05 19:00 UTC"))
            #expect(message.decodedBody.contains("Where: Nina's kitchen"))
            await nina.close()
        }
    }

    /// A title and a host name full of line breaks make one subject line: no header of their own, no
    /// recipient added.
    @Test func aTitleOrHostNameCannotInjectHeaders() async throws {
        try await Self.with { rig, smtp in
            let (nina, _) = try await rig.hearth.signIn("nina")
            let renamed = try await nina.patch("/v1/docs/users/nina", JSON.object([("displayName", .string("Nina\r\nBcc: eve@evil.test"))]).text)
            #expect(renamed.status == 200, "\(renamed.text)")
            let mailBefore = smtp.received().count
            let event = try await Self.newEvent(nina, title: "Tacos\r\nBcc: eve@evil.test\r\n\r\nforged body\nX-Injected: yes")
            #expect(try await Self.invite(nina, to: event, name: "Zoe", email: "zoe@example.com").status == 201)
            let quiet = try await rig.settled()
            #expect(quiet.events.isEmpty && quiet.mail.isEmpty, "\(quiet)")
            let mail = Array(smtp.received().dropFirst(mailBefore))
            #expect(mail.count == 1)
            let message = try #require(mail.first)
            #expect(message.to == ["zoe@example.com"])
            #expect(message.header("Bcc") == nil && message.header("X-Injected") == nil)
            #expect(message.header("Subject") == "Nina Bcc: eve@evil.test invites you to Tacos Bcc: eve@evil.test forged body X-Injected: yes")
            await nina.close()
        }
    }

    /// The subject's line breaks, as a table, without a socket.
    @Test(arguments: [
        ("Tacos", "Nina", "Nina invites you to Tacos"),
        ("Tacos\r\nBcc: x@y.z", "Nina", "Nina invites you to Tacos Bcc: x@y.z"),
        ("a\nb\rc", "N\u{2028}ina", "N ina invites you to a b c"),
        ("a\u{85}b\u{2029}c\u{0B}d\u{0C}e", "Nina", "Nina invites you to a b c d e"),
        ("Fiesta \u{1F32E}", "Zoë", "Zoë invites you to Fiesta \u{1F32E}"),
    ])
    func theSubjectIsOneLine(title: String, host: String, subject: String) {
        let invitation = ComeOverHandlers.Invitation(eventTitle: title, hostName: host, startsAt: nil, location: nil)
        #expect(invitation.subject == subject)
    }
}
