import Foundation
import HearthAuth
import HearthClient
import HearthCore
import HearthServer
import HearthTesting
import Testing

/// Accounts through the client: the session's tokens are kept, sent, refreshed before they expire, and
/// forgotten at sign-out.
@Suite struct AccountTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{id} {
              allow read, write: if request.auth != null;
            }
          }
        }
        """

    static func rulesFile() throws -> String {
        let path = TestFolders.make() + "/app.rules"
        try rules.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func signUpSignInRefreshAndSignOut() async throws {
        let file = try Self.rulesFile()
        try await TestServer.with(configure: { $0.rulesFile = file; $0.useTestAccounts() }) { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!)
            let note = db.document("notes/n1")
            let before = await #expect(throws: HearthClientError.self) { try await note.setData(["text": "hi"]) }
            #expect(before?.code == .permissionDenied)

            let ann = try await db.auth.createUser(withEmail: "ann@example.com", password: "a long password", displayName: "Ann")
            #expect(ann.email == "ann@example.com" && ann.displayName == "Ann" && !ann.isAnonymous)
            #expect(await db.auth.currentUser == ann)
            try await note.setData(["text": "hi"])
            #expect(try await db.auth.fetchUser().uid == ann.uid)

            // A refresh rotates the pair: the old access token stops working, the client uses the new one.
            let old = try #require(try await db.auth.idToken())
            let fresh = try await db.auth.refreshToken()
            #expect(fresh != old)
            let stale = await #expect(throws: HearthClientError.self) {
                try await Hearth(url: db.url, token: old).document("notes/n1").getDocument()
            }
            #expect(stale?.status == 401)
            #expect(try await note.getDocument().exists)

            // Another client handed the token (a function acting for an event's user) acts as Ann.
            let handed = Hearth(url: db.url, token: fresh)
            #expect(try await handed.document("notes/n1").getDocument().get("text") == .string("hi"))

            try await db.auth.signOut()
            #expect(await db.auth.currentUser == nil)
            let after = await #expect(throws: HearthClientError.self) { try await note.getDocument() }
            #expect(after?.code == .permissionDenied)
            let revoked = await #expect(throws: HearthClientError.self) { try await handed.document("notes/n1").getDocument() }
            #expect(revoked?.status == 401, "sign-out ended the session on the server")

            let wrong = await #expect(throws: HearthClientError.self) {
                try await db.auth.signIn(withEmail: "ann@example.com", password: "not her password")
            }
            #expect(wrong?.status == 401 && wrong?.message == "The email or password is incorrect.")
            #expect(try await db.auth.signIn(withEmail: "ann@example.com", password: "a long password").uid == ann.uid)
            let taken = await #expect(throws: HearthClientError.self) {
                try await db.auth.createUser(withEmail: "ann@example.com", password: "another long one")
            }
            #expect(taken?.code == .alreadyExists && taken?.status == 409)

            let guest = try await Hearth(url: db.url).auth.signInAnonymously()
            #expect(guest.isAnonymous && guest.email == nil)
        }
    }

    /// An access token that expired is replaced through the refresh token before the next call.
    @Test func anExpiredAccessTokenIsRefreshedBeforeTheCall() async throws {
        let file = try Self.rulesFile()
        try await TestServer.with(configure: { $0.rulesFile = file; $0.useTestAccounts(); $0.auth.accessTokenLifetime = .seconds(2) }) { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!)
            try await db.auth.createUser(withEmail: "bo@example.com", password: "a long password")
            let first = try #require(try await db.auth.idToken())
            try await db.document("notes/a").setData(["n": 1])
            try await Task.sleep(for: .seconds(3))
            try await db.document("notes/a").updateData(["n": 2])
            #expect(try await db.auth.idToken() != first)
            #expect(try await db.document("notes/a").getDocument().get("n") == .int(2))
        }
    }
}
