import Foundation
import HearthClient
import HearthCore
import HearthFunctions

/// Letter's "new reply" function (docs/apps/letter.md), apart from `main.swift` so the tests serve the same
/// handlers. It acts with its event's token, as the identity `letter-notifier` of the functions file, which the
/// rules let find a letter's author and nothing more.
enum LetterHandlers {
    /// The push a letter's author gets: it names their letter, never who replied (replies are anonymous).
    static func notification(letterTitle: String) -> PushNotification {
        PushNotification(title: "New reply", body: "Someone replied to your letter \u{201C}\(letterTitle)\u{201D}")
    }

    static func functions(hearth url: URL) -> Functions {
        var functions = Functions()
        functions.onDocumentCreated("letters/{letterId}/replies/{replyId}") { event in
            guard let letterID = event.params["letterId"], let replyID = event.params["replyId"],
                  let reply = event.document?.after else { return }
            // The author's own reply (the rules require the mark from them and refuse it from anyone else).
            if reply.fields["fromAuthor"] == .bool(true) { return }
            guard let token = event.auth?.token else { throw FunctionsError.event("the endpoint declares no identity") }
            let hearth = Hearth(url: url, token: token)
            guard let letter = try await author(of: letterID, hearth) else { return }
            // A user with no device gets nothing (the send queues none); the app shows replies when opened.
            // Keyed by the event: delivered again (an answer lost), it is not pushed twice.
            try await hearth.sendPush(to: .user(letter.uid), notification: notification(letterTitle: letter.title),
                                      data: ["letter": letterID, "reply": replyID], idempotencyKey: event.id)
        }
        return functions
    }

    /// The uid of a letter's author and the letter's title, or nil when the letter is gone (withdrawn since).
    /// Authorship is kept only in the author's index, `users/<uid>/letters/<letterId>`, created in the letter's
    /// commit and so with its `createdAt`: the one query the rules allow this identity finds the documents
    /// made at that time, the letter and its index entry, and takes the entry with the letter's id.
    static func author(of letterID: String, _ hearth: Hearth) async throws -> (uid: String, title: String)? {
        let letter = try await hearth.document("letters/\(letterID)").getDocument()
        guard letter.exists, let createdAt = letter.get("createdAt"), case .string(let title)? = letter.get("title") else {
            return nil
        }
        let made = try await hearth.collectionGroup("letters").whereField("createdAt", isEqualTo: createdAt).getDocuments()
        for document in made.documents {
            let segments = document.reference.path.split(separator: "/")
            if segments.count == 4, segments[0] == "users", segments[2] == "letters", segments[3] == letterID {
                return (String(segments[1]), title)
            }
        }
        return nil
    }
}
