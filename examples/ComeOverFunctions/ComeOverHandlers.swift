import Foundation
import HearthClient
import HearthCore
import HearthFunctions

/// ComeOver's invitation function (docs/apps/comeover.md), apart from `main.swift` so the tests serve the same
/// handlers. It acts with its event's token, as the identity `comeover-inviter` of the functions file, which
/// the rules let read events; profiles are open to every signed-in caller.
enum ComeOverHandlers {
    /// What an invitation says, built from the event and its host's profile.
    struct Invitation: Equatable {
        var eventTitle: String
        var hostName: String
        var startsAt: Timestamp?
        var location: String?

        /// The push to an invitee with an account.
        var notification: PushNotification {
            PushNotification(title: "You're invited", body: "\(hostName) invites you to \(eventTitle)")
        }

        /// The email's subject, on one line: a title or name with line breaks (CR, LF, or Unicode's) has them
        /// made spaces, so that nothing they hold can become a header of its own.
        var subject: String { Self.oneLine("\(hostName) invites you to \(eventTitle)") }

        /// The email's text: the invitee's name, what, when (UTC) and where.
        func text(to name: String) -> String {
            var lines = ["Hello \(name),", "", "\(hostName) invites you to \(eventTitle)."]
            if let startsAt { lines.append("When: \(Self.when(startsAt))") }
            if let location { lines.append("Where: \(location)") }
            lines += ["", "Sent by ComeOver on behalf of \(hostName)."]
            return lines.joined(separator: "\n")
        }

        static func oneLine(_ text: String) -> String {
            let breaks: Set<Unicode.Scalar> = ["\r", "\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}"]
            var out = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                if breaks.contains(scalar) {
                    if out.last != " " { out.append(" ") }
                } else {
                    out.append(scalar)
                }
            }
            return String(out)
        }

        /// `2026-12-05 19:00 UTC`.
        static func when(_ time: Timestamp) -> String {
            let text = time.rfc3339  // 2026-12-05T19:00:00.000000Z
            return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + " UTC"
        }
    }

    static func functions(hearth url: URL) -> Functions {
        var functions = Functions()
        functions.onDocumentCreated("events/{eventId}/invitations/{invitationId}") { event in
            guard let eventID = event.params["eventId"], let invitation = event.document?.after else { return }
            let uid = invitation.fields["uid"].flatMap(string)
            let email = invitation.fields["email"].flatMap(string)
            // Neither an account nor an address: nobody to tell (the host tells them).
            guard uid != nil || email != nil else { return }
            guard let token = event.auth?.token else { throw FunctionsError.event("the endpoint declares no identity") }
            let hearth = Hearth(url: url, token: token)
            guard let about = try await invitationText(event: eventID, hearth) else { return }  // the event is gone
            if let uid {
                // An invitee without a device gets nothing now; the app's "invited to" query shows the event.
                // Keyed by the event: delivered again (an answer lost), it is not pushed twice.
                try await hearth.sendPush(to: .user(uid), notification: about.notification, data: ["event": eventID],
                                          idempotencyKey: event.id)
            } else if let email {
                let name = invitation.fields["name"].flatMap(string) ?? ""
                do {
                    try await hearth.sendEmail(to: [email], subject: about.subject, text: about.text(to: name),
                                               idempotencyKey: event.id)
                } catch let error as HearthClientError where error.code == .invalidArgument {
                    // An address the rules take but mail cannot (not plain ASCII name@domain, a line break):
                    // sending again would be refused again, so the event is acknowledged with nothing sent.
                    print("invitation \(eventID)/\(event.params["invitationId"] ?? ""): no email sent: \(error.message)")
                }
            }
        }
        return functions
    }

    /// The event's title, time and place and its host's display name (their username when they have none,
    /// "Someone" without a profile), or nil when the event no longer exists.
    static func invitationText(event eventID: String, _ hearth: Hearth) async throws -> Invitation? {
        let party = try await hearth.document("events/\(eventID)").getDocument()
        guard party.exists, let title = party.get("title").flatMap(string) else { return nil }
        var hostName = "Someone"
        if let author = party.get("author").flatMap(string) {
            let host = try await hearth.document("users/\(author)").getDocument()
            hostName = host.get("displayName").flatMap(string) ?? host.get("username").flatMap(string) ?? hostName
        }
        var startsAt: Timestamp?
        if case .timestamp(let time)? = party.get("startsAt") { startsAt = time }
        return Invitation(eventTitle: title, hostName: hostName, startsAt: startsAt, location: party.get("location").flatMap(string))
    }

    static func string(_ value: Value) -> String? {
        if case .string(let s) = value { return s }
        return nil
    }
}
