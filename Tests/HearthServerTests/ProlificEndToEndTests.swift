import Foundation
import HearthCore
import HearthTesting
import Testing

/// Prolific over real HTTP, story by story as docs/apps/prolific.md maps them: accounts, composing a thread,
/// snippets, one vote per user (increment plus vote document), the owner's closing of a round refused (the
/// app's closing function does it: Tests/HearthFunctionsTests/ProlificClosingTests); profile pictures and
/// snippet images.
@Suite(.serialized) struct ProlificEndToEndTests {
    static func commit(_ writes: [JSON], transaction: String? = nil) -> String {
        var pairs: [(String, JSON)] = [("writes", .array(writes))]
        if let transaction { pairs.append(("transaction", .string(transaction))) }
        return JSON.object(pairs).text
    }

    static func write(_ kind: String, _ path: String, _ data: String) throws -> JSON {
        .object([(kind, .string(path)), ("data", try JSON.parse(data))])
    }

    static let now = #"{"$serverTimestamp": true}"#
    static let tomorrow = #"{"$timestamp": "\#(Timestamp(microseconds: Timestamp.now().microseconds + 86_400_000_000).rfc3339)"}"#

    /// Profile pictures (`avatars/<uid>/`, replaced and deleted by their owner) and snippet images
    /// (`snippets/<project>/<round>/<author>/`, uploaded for an open round, never replaced or deleted), read
    /// by every signed-in user as the profiles and threads that name them are.
    @Test func picturesAndSnippetImagesAreReadLikeTheDocumentsThatNameThem() async throws {
        try await Harness.with(rules: "rules/prolific.rules", fixtures: "fixtures/prolific.json", indexes: "indexes/prolific.json") { hearth in
            let (alice, _) = try await hearth.signIn("alice")
            let (bob, bobSession) = try await hearth.signIn("bob")
            let (carol, _) = try await hearth.signIn("carol")
            let anonymous = hearth.client(as: .nobody)
            let mebibyte = 1024 * 1024

            // A profile picture: the owner uploads it and names it; others see it.
            let avatar = "avatars/carol/me.png"
            let picture = try Harness.projectBytes("fixtures/files/prolific/alice.png")
            #expect(try hearth.expectAllowed(try await carol.putFile(avatar, picture, contentType: "image/png")).status == 201)
            try hearth.expectAllowed(try await carol.patch("/v1/docs/users/carol", #"{"photo": "\#(avatar)"}"#), "naming the picture")
            try hearth.expectDenied(try await carol.patch("/v1/docs/users/carol", #"{"photo": "avatars/bob/me.png"}"#), "another's picture")
            let named = try #require(try await bob.get("/v1/docs/users/carol").json?["data"]?["photo"]?.stringValue)
            #expect(try hearth.expectAllowed(try await bob.get("/v1/files/\(named)"), "another user reading the picture").body == picture)
            try hearth.expectDenied(try await anonymous.get("/v1/files/\(named)"), "a guest reading the picture")
            // Threads show each author's picture small, to signed-in users only.
            try await hearth.expectThumbnail(named, width: 12, height: 12, readers: [bob, carol], strangers: [anonymous],
                                             "an author's thumbnail beside a snippet")
            try hearth.expectDenied(try await bob.get("/v1/files?prefix=avatars/carol/"), "listing another's pictures")
            try await hearth.expectUploadsRefused([
                RefusedUpload("a picture over 2 MiB", "avatars/carol/big.png", size: 2 * mebibyte + 1, contentType: "image/png"),
                RefusedUpload("a picture that is no image", "avatars/carol/me.txt", size: 10, contentType: "text/plain"),
                RefusedUpload("into another user's folder", "avatars/carol/x.png", size: 10, contentType: "image/png",
                              as: .token(bobSession.token)),
            ], by: carol)
            try await hearth.expectReplacedThenDeleted(avatar, with: Harness.projectBytes("fixtures/files/prolific/bob.png"),
                                                       contentType: "image/png", owner: carol, reader: bob)

            // A snippet image, for the open round 1 of bob's thread: uploaded, then named by the snippet.
            let round = "projects/8QXgArhOle2KDDvPw23Y/rounds/1"
            let image = "snippets/8QXgArhOle2KDDvPw23Y/1/carol/storm.png"
            let bytes = try Harness.projectBytes("fixtures/files/prolific/lamp.png")
            let uploaded = try hearth.expectAllowed(try await carol.putFile(image, bytes, contentType: "image/png"), "a snippet image")
            let snippet = #"{"author": "carol", "authorName": "Carol", "text": "The storm drew a picture.", "image": "\#(image)", "votes": 0, "createdAt": \#(Self.now)}"#
            let created = try hearth.expectAllowed(try await carol.post("/v1/docs/\(round)/snippets", snippet), "a snippet with an image")
            let path = try #require(created.json?["path"]?.stringValue)
            try hearth.expectDenied(try await carol.post("/v1/docs/\(round)/snippets",
                                                         snippet.replacingOccurrences(of: "/1/carol/", with: "/2/carol/")), "another round's image")
            let shown = try #require(try await alice.get("/v1/docs/\(path)").json?["data"]?["image"]?.stringValue)
            #expect(try hearth.expectAllowed(try await alice.get("/v1/files/\(shown)"), "a reader of the thread").body == bytes)
            try hearth.expectDenied(try await anonymous.get("/v1/files/\(shown)"), "a guest reading the snippet image")
            try await hearth.expectThumbnail(shown, width: 16, height: 10, readers: [alice], strangers: [anonymous],
                                             "the snippet image in the thread's feed")
            // The fixture's winning snippet shows the fixture's image.
            let winner = try hearth.expectAllowed(try await bob.get("/v1/docs/projects/00s7VySftXJRPdnbVgCx/rounds/1/snippets/GZBxg4eFbC1M0NHRzBVJ"))
            let lamp = try #require(winner.json?["data"]?["image"]?.stringValue)
            #expect(try await bob.get("/v1/files/\(lamp)").body == bytes)

            // Immutable, as the snippet is: not replaced, not deleted, even by its author; not for a closed round.
            try await hearth.expectUploadsRefused([
                RefusedUpload("replacing a snippet image", image, size: 10, contentType: "image/png"),
                RefusedUpload("an image over 5 MiB", "snippets/8QXgArhOle2KDDvPw23Y/1/carol/big.png", size: 5 * mebibyte + 1, contentType: "image/png"),
                RefusedUpload("an image that is no image", "snippets/8QXgArhOle2KDDvPw23Y/1/carol/a.txt", size: 10, contentType: "text/plain"),
                RefusedUpload("into another author's folder", "snippets/8QXgArhOle2KDDvPw23Y/1/bob/a.png", size: 10, contentType: "image/png"),
                RefusedUpload("for a closed round", "snippets/00s7VySftXJRPdnbVgCx/1/carol/late.png", size: 10, contentType: "image/png"),
            ], by: carol)
            try hearth.expectDenied(try await carol.delete("/v1/files/\(image)"), "deleting a snippet image")
            let kept = try hearth.expectAllowed(try await bob.get("/v1/files/\(image)?alt=json"))
            #expect(kept.json?["etag"] == uploaded.json?["etag"])
            for client in [alice, bob, carol, anonymous] { await client.close() }
        }
    }

    @Test func theStoriesOfProlific() async throws {
        try await Harness.with(rules: "rules/prolific.rules", fixtures: "fixtures/prolific.json", indexes: "indexes/prolific.json") { hearth in
            let anonymous = hearth.client(as: .nobody)
            // Registration, then the profile document.
            let signUp = try await anonymous.signedUp("zoe@example.com", "zoe-password-1", displayName: "Zoe")
            var zoe = hearth.client(as: .token(signUp.token))
            try hearth.expectAllowed(try await zoe.put("/v1/docs/users/\(signUp.uid)",
                                                       #"{"displayName": "Zoe", "createdAt": \#(Self.now)}"#))
            // Log in, and stay logged in across a restart of the client: refresh, then who am I.
            _ = try await anonymous.loggedIn("zoe@example.com", "zoe-password-1")
            let refreshed = try #require(SignedIn(try await anonymous.refresh(signUp.refreshToken)))
            await zoe.close()
            zoe = hearth.client(as: .token(refreshed.token))
            let me = try hearth.expectAllowed(try await zoe.get("/v1/auth/me"))
            #expect(me.json?["uid"]?.stringValue == signUp.uid)

            // Compose a starter thread: the project and its round 1 in one commit.
            let project = "projects/" + makeAutoID()
            let starter = "The lighthouse keeper found a letter that had not been written yet."
            try hearth.expectAllowed(try await zoe.post("/v1/commit", Self.commit([
                try Self.write("create", project, """
                    {"owner": "\(signUp.uid)", "ownerName": "Zoe", "title": "The keeper", "starter": "\(starter)",
                     "story": ["\(starter)"], "currentRound": 1, "isComplete": false, "roundHours": 24,
                     "createdAt": \(Self.now), "updatedAt": \(Self.now)}
                    """),
                try Self.write("create", "\(project)/rounds/1",
                               #"{"number": 1, "isComplete": false, "openedAt": \#(Self.now), "closesAt": \#(Self.tomorrow)}"#),
            ])), "composing a thread")

            // Two other users read the thread and submit snippets.
            let (bob, bobSession) = try await hearth.signIn("bob")
            let (carol, _) = try await hearth.signIn("carol")
            try hearth.expectAllowed(try await bob.get("/v1/docs/\(project)"), "thread details")
            try hearth.expectAllowed(try await bob.get("/v1/docs/\(project)/rounds/1"), "the current round")
            func submit(_ client: HearthClient, _ uid: String, _ name: String, _ text: String) async throws -> String {
                let created = try hearth.expectAllowed(try await client.post("/v1/docs/\(project)/rounds/1/snippets", """
                    {"author": "\(uid)", "authorName": "\(name)", "text": "\(text)", "votes": 0, "createdAt": \(Self.now)}
                    """), "submitting a snippet")
                return try #require(created.json?["path"]?.stringValue)
            }
            let bobs = try await submit(bob, "bob", "Bob Lee", "It was addressed to him, in his own hand.")
            let carols = try await submit(carol, "carol", "Carol Diaz", "The ink was still wet.")
            // Voting in someone else's name, and snippets that are not one's own, are refused.
            try hearth.expectDenied(try await bob.post("/v1/docs/\(project)/rounds/1/snippets", """
                {"author": "carol", "authorName": "Carol", "text": "forged", "votes": 0, "createdAt": \(Self.now)}
                """), "a snippet in another's name")
            // Snippets cannot be edited or deleted once posted.
            try hearth.expectDenied(try await bob.patch("/v1/docs/\(bobs)", #"{"text": "changed"}"#), "editing a snippet")
            try hearth.expectDenied(try await bob.delete("/v1/docs/\(bobs)"), "deleting a snippet")

            // Like: the count moves by one in the commit that creates the voter's vote document.
            func vote(_ client: HearthClient, _ uid: String, _ snippet: String, by step: Int = 1) async throws -> HTTPResult {
                try await client.post("/v1/commit", Self.commit([
                    try Self.write("update", snippet, #"{"votes": {"$increment": \#(step)}}"#),
                    try Self.write("create", "\(snippet)/votes/\(uid)", #"{"votedAt": \#(Self.now)}"#),
                ]))
            }
            // Bob has his snippet open and sees Carol's vote arrive live.
            let live = try await ListenClient.watching(bobs, port: hearth.port, token: bobSession.token)
            try hearth.expectAllowed(try await vote(carol, "carol", bobs), "carol likes bob's snippet")
            #expect(try await live.expectChange("modified", of: bobs)["data"]?["votes"] == .int(1))
            await live.close()
            try hearth.expectAllowed(try await vote(zoe, signUp.uid, bobs), "zoe likes bob's snippet")
            let twice = try await vote(carol, "carol", bobs)
            #expect([403, 409].contains(twice.status), "a second vote: \(twice.text)")
            try hearth.expectDenied(try await vote(bob, "carol", carols), "a vote in someone else's name")
            try hearth.expectDenied(try await vote(bob, "bob", carols, by: 2), "a vote counted twice")
            try hearth.expectDenied(try await bob.patch("/v1/docs/\(carols)", #"{"votes": 10}"#), "votes without a vote document")
            // Did I vote? Only the voter reads their vote.
            try hearth.expectAllowed(try await carol.get("/v1/docs/\(bobs)/votes/carol"))
            try hearth.expectDenied(try await bob.get("/v1/docs/\(bobs)/votes/carol"), "reading another's vote")
            #expect(try await bob.get("/v1/docs/\(bobs)/votes/bob").status == 404)
            #expect(try await bob.get("/v1/docs/\(bobs)").json?["data"]?["votes"] == .int(2))

            // Closing the round is the closing function's alone (a timer on the round's `closesAt`): the owner's
            // app may no longer do it, not even in a transaction that read the current votes.
            func closeRound(_ client: HearthClient) async throws -> HTTPResult {
                let begun = try hearth.expectAllowed(try await client.post("/v1/transactions"))
                let id = try #require(begun.json?["transaction"]?.stringValue)
                let thread = try hearth.expectAllowed(try await client.get("/v1/docs/\(project)?transaction=\(id)"))
                guard case .array(let story)? = thread.json?["data"]?["story"] else { throw ExpectationFailure("no story") }
                let text = JSON.string("It was addressed to him, in his own hand.")
                return try await client.post("/v1/commit", Self.commit([
                    .object([("update", .string("\(project)/rounds/1")), ("data", .object([
                        ("isComplete", .bool(true)), ("winner", .string(bobs.split(separator: "/").last.map(String.init) ?? "")),
                        ("winnerText", text), ("winnerAuthor", .string("bob")), ("closedAt", try JSON.parse(Self.now))]))]),
                    .object([("update", .string(project)), ("data", .object([
                        ("story", .array(story + [text])), ("currentRound", .int(2)), ("updatedAt", try JSON.parse(Self.now))]))]),
                    try Self.write("create", "\(project)/rounds/2",
                                   #"{"number": 2, "isComplete": false, "openedAt": \#(Self.now), "closesAt": \#(Self.tomorrow)}"#),
                ], transaction: id))
            }
            try hearth.expectDenied(try await closeRound(bob), "bob closes zoe's round")
            try hearth.expectDenied(try await closeRound(zoe), "the owner closes her round")
            try hearth.expectDenied(try await zoe.patch("/v1/docs/\(project)/rounds/1", #"{"winner": "x"}"#), "the owner picks a winner")
            let open = try await bob.get("/v1/docs/\(project)")
            #expect(open.json?["data"]?["currentRound"] == .int(1))
            #expect(open.json?["data"]?["story"] == .array([.string(starter)]))
            // The owner may move the round's closing time, before it comes (here, a day later).
            let later = Timestamp(microseconds: Timestamp.now().microseconds + 2 * 86_400_000_000).rfc3339
            try hearth.expectAllowed(try await zoe.patch("/v1/docs/\(project)/rounds/1", #"{"closesAt": {"$timestamp": "\#(later)"}}"#),
                                     "the owner moves the closing time")
            #expect(try await bob.get("/v1/docs/\(project)/rounds/1").json?["data"]?["closesAt"]?["$timestamp"]?.stringValue == later)
            try hearth.expectDenied(try await bob.post("/v1/docs/projects/00s7VySftXJRPdnbVgCx/rounds/1/snippets", """
                {"author": "bob", "authorName": "Bob", "text": "late", "votes": 0, "createdAt": \(Self.now)}
                """), "a snippet for a closed round")
            try hearth.expectDenied(try await zoe.patch("/v1/docs/\(project)", #"{"title": "Retitled"}"#), "retitling the thread")

            // Home feed: newest activity first, 10 at a time; refresh runs it again; scrolling continues after
            // the last thread shown.
            let feed = #"{"from": "projects", "orderBy": [["updatedAt", "desc"]], "limit": 10}"#
            let first = try hearth.expectAllowed(try await bob.query(feed), "the home feed")
            #expect(first.documentPaths.count == 10 && first.documentPaths.first == project)
            #expect(try await bob.query(feed).documentPaths == first.documentPaths)
            let next = try hearth.expectAllowed(try await bob.query(
                #"{"from": "projects", "orderBy": [["updatedAt", "desc"]], "limit": 10, "startAfter": "\#(first.documentPaths.last!)"}"#))
            #expect(next.documentPaths.count == 10 && Set(next.documentPaths).isDisjoint(with: first.documentPaths))
            // A round's snippets, most votes first; "my snippets" across every thread.
            let ranked = try await bob.query(#"{"from": "\#(project)/rounds/1/snippets", "orderBy": [["votes", "desc"]], "limit": 50}"#)
            #expect(ranked.documentPaths == [bobs, carols])
            let mine = try hearth.expectAllowed(try await bob.query(
                #"{"from": {"collectionGroup": "snippets"}, "where": [["author", "==", "bob"]], "orderBy": [["createdAt", "desc"]]}"#))
            #expect(mine.documentPaths.first == bobs)
            try hearth.expectDenied(try await anonymous.query(feed), "a visitor's feed")

            // A visitor who is not signed in sees nothing.
            try hearth.expectDenied(try await anonymous.get("/v1/docs/\(project)"))

            // Log out: the token stops working at once.
            #expect(try await zoe.post("/v1/auth/logout").status == 204)
            #expect(try await zoe.get("/v1/docs/\(project)").status == 401)

            // Reset a forgotten password, then log in with the new one.
            #expect(try await anonymous.post("/v1/auth/password-reset", HearthClient.body([("email", "zoe@example.com")])).status / 100 == 2)
            let resetToken = try await hearth.outboxToken(to: "zoe@example.com")
            try hearth.expectAllowed(try await anonymous.post("/v1/auth/password-reset/confirm",
                                                              HearthClient.body([("token", resetToken), ("newPassword", "zoe-password-2")])))
            #expect(try await anonymous.logIn("zoe@example.com", "zoe-password-1").status == 401)
            _ = try await anonymous.loggedIn("zoe@example.com", "zoe-password-2")
            for client in [anonymous, zoe, bob, carol] { await client.close() }
        }
    }
}
