import HearthCore
import HearthTesting
import Testing

/// Letter over real HTTP, as docs/apps/letter.md maps its stories: accounts, composing a letter with its
/// author's private index in one commit, anonymous reading and replying, reporting, moderation, and the
/// author withdrawing a letter with its replies; profile pictures as private as the profiles.
@Suite(.serialized) struct LetterEndToEndTests {
    static let now = #"{"$serverTimestamp": true}"#

    /// A profile picture: uploaded to `avatars/<uid>/`, named by the profile's `photo`, and, like the profile,
    /// seen by its owner alone (no reader may put a face to an anonymous letter); images up to 2 MiB.
    @Test func aProfilePictureIsAsPrivateAsTheProfile() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json", indexes: "indexes/letter.json") { hearth in
            let (alice, _) = try await hearth.signIn("alice")
            let (bob, bobSession) = try await hearth.signIn("bob")
            let (moderator, _) = try await hearth.signIn("mod")
            let anonymous = hearth.client(as: .nobody)
            let picture = try Harness.projectBytes("fixtures/files/letter/alice.png")
            let path = "avatars/alice/2026.png"

            #expect(try hearth.expectAllowed(try await alice.putFile(path, picture, contentType: "image/png")).status == 201)
            try hearth.expectAllowed(try await alice.patch("/v1/docs/users/alice", #"{"photo": "\#(path)"}"#), "naming the picture")
            try hearth.expectDenied(try await alice.patch("/v1/docs/users/alice", #"{"photo": "avatars/bob/me.png"}"#), "another's picture")
            try hearth.expectDenied(try await alice.patch("/v1/docs/users/alice", #"{"photo": "https://img.example.com/a.png"}"#), "a URL")
            let named = try #require(try await alice.get("/v1/docs/users/alice").json?["data"]?["photo"]?.stringValue)
            #expect(try hearth.expectAllowed(try await alice.get("/v1/files/\(named)")).body == picture)
            // The fixture's picture, named by the fixture's profile, is the fixture's image.
            #expect(try await alice.get("/v1/files/avatars/alice/me.png").body == Harness.projectBytes("fixtures/files/letter/alice.png"))
            for stranger in [bob, moderator, anonymous] {
                try hearth.expectDenied(try await stranger.get("/v1/files/\(path)"), "someone else reading the picture")
                try hearth.expectDenied(try await stranger.get("/v1/files?prefix=avatars/alice/"), "someone else listing the pictures")
            }
            // The profile screen's small picture is as private as the picture.
            try await hearth.expectThumbnail(named, width: 8, height: 8, readers: [alice], strangers: [bob, moderator, anonymous],
                                             "the profile's thumbnail")
            let mine = try hearth.expectAllowed(try await alice.get("/v1/files?prefix=avatars/alice/"))
            guard case .array(let files)? = mine.json?["files"] else { throw ExpectationFailure("no listing: \(mine.text)") }
            #expect(files.compactMap { $0["path"]?.stringValue } == ["avatars/alice/2026.png", "avatars/alice/me.png"])

            try await hearth.expectUploadsRefused([
                RefusedUpload("a picture over 2 MiB", "avatars/alice/big.png", size: 2 * 1024 * 1024 + 1, contentType: "image/png"),
                RefusedUpload("a video", "avatars/alice/clip.mp4", size: 1000, contentType: "video/mp4"),
                RefusedUpload("no declared type", "avatars/alice/raw", size: 1000, contentType: nil),
                RefusedUpload("a replacement over 2 MiB", path, size: 2 * 1024 * 1024 + 1, contentType: "image/png"),
                RefusedUpload("into another user's folder", "avatars/alice/x.png", size: 100, contentType: "image/png",
                              as: .token(bobSession.token)),
                RefusedUpload("over another user's picture", path, size: 100, contentType: "image/png", as: .token(bobSession.token)),
                RefusedUpload("outside the avatar folder", "letters/me.png", size: 100, contentType: "image/png"),
            ], by: alice)
            try hearth.expectDenied(try await bob.delete("/v1/files/\(path)"), "deleting another's picture")

            try await hearth.expectReplacedThenDeleted(path, with: Harness.projectBytes("fixtures/files/letter/carol.png"),
                                                       contentType: "image/png", owner: alice, reader: alice)
            for client in [alice, bob, moderator, anonymous] { await client.close() }
        }
    }

    @Test func theStoriesOfLetter() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json", indexes: "indexes/letter.json") { hearth in
            let anonymous = hearth.client(as: .nobody)
            let signUp = try await anonymous.signedUp("tess@example.com", "tess-password-1")
            let session = try #require(SignedIn(try await anonymous.refresh(signUp.refreshToken)))
            let tess = hearth.client(as: .token(session.token))
            let uid = signUp.uid
            try hearth.expectAllowed(try await tess.put("/v1/docs/users/\(uid)", #"{"createdAt": \#(Self.now)}"#))
            #expect(try await tess.get("/v1/auth/me").json?["uid"]?.stringValue == uid)
            try hearth.expectAllowed(try await tess.putFile("avatars/\(uid)/me.png", Harness.projectBytes("fixtures/files/letter/carol.png"),
                                                            contentType: "image/png"), "uploading a profile picture")
            try hearth.expectAllowed(try await tess.patch("/v1/docs/users/\(uid)", #"{"photo": "avatars/\#(uid)/me.png"}"#))

            // Bob has the home timeline open and sees new letters arrive live.
            let (bob, bobSession) = try await hearth.signIn("bob")
            let live = try await ListenClient.connect(port: hearth.port, credentials: .header(bobSession.token))
            try await live.listen("home", query: #"{"from": "letters", "orderBy": [["createdAt", "desc"]], "limit": 5}"#)
            let initial = try await live.expect("snapshot", id: "home")
            #expect(initial["initial"] == .bool(true))

            // Compose: the letter and the author's private index entry in one commit.
            let id = makeAutoID()
            func compose(_ client: HearthClient, _ owner: String, _ id: String) async throws -> HTTPResult {
                try await client.post("/v1/commit", """
                    {"writes": [
                      {"create": "letters/\(id)", "data": {"category": "study", "title": "Exam nerves",
                        "content": "My finals are in a week and I cannot sleep.", "createdAt": \(Self.now)}},
                      {"create": "users/\(owner)/letters/\(id)", "data": {"title": "Exam nerves", "category": "study",
                        "createdAt": \(Self.now)}}]}
                    """)
            }
            try hearth.expectAllowed(try await compose(tess, uid, id), "composing a letter")
            // The new letter enters Bob's window at the top and pushes the oldest of the five out.
            let update = try await live.expect("snapshot", id: "home")
            guard case .array(let changes)? = update["changes"] else { throw ExpectationFailure("a snapshot without changes") }
            #expect(changes.contains { $0["type"] == .string("added") && $0["doc"]?["path"] == .string("letters/\(id)")
                                       && $0["newIndex"] == .int(0) })
            #expect(changes.contains { $0["type"] == .string("removed") })
            #expect(live.views["home"]?.first?.path.description == "letters/\(id)" && live.views["home"]?.count == 5)
            await live.close()
            try hearth.expectDenied(try await tess.post("/v1/docs/letters", """
                {"category": "study", "title": "Signed", "content": "by me", "author": "\(uid)", "createdAt": \(Self.now)}
                """), "a letter naming its author")
            try hearth.expectDenied(try await bob.put("/v1/docs/users/bob/letters/\(id)",
                                                      #"{"title": "Exam nerves", "category": "study", "createdAt": \#(Self.now)}"#),
                                    "claiming someone else's letter")

            // Detail view by another reader: no trace of the author; the author's index stays private.
            let read = try hearth.expectAllowed(try await bob.get("/v1/docs/letters/\(id)"))
            #expect(Set(read.json?["data"].flatMap { if case .object(let p) = $0 { p.map(\.0) } else { nil } } ?? [])
                    == ["category", "content", "createdAt", "title"])
            try hearth.expectDenied(try await bob.get("/v1/docs/users/\(uid)/letters/\(id)"), "probing another's index")
            try hearth.expectDenied(try await bob.get("/v1/docs/users/\(uid)"), "reading another's profile")
            try hearth.expectAllowed(try await tess.get("/v1/docs/users/\(uid)/letters/\(id)"))
            try hearth.expectDenied(try await tess.patch("/v1/docs/letters/\(id)", #"{"title": "Edited"}"#), "editing a letter")

            // Home: every letter, newest first, 5 at a time; pull to refresh runs it again, scrolling continues
            // after the last letter shown (a document cursor).
            let home = #"{"from": "letters", "orderBy": [["createdAt", "desc"]], "limit": 5}"#
            let first = try hearth.expectAllowed(try await bob.query(home), "the home timeline")
            #expect(first.documentPaths.count == 5 && first.documentPaths.first == "letters/\(id)")
            #expect(try await bob.query(home).documentPaths == first.documentPaths)
            let more = try hearth.expectAllowed(try await bob.query(
                #"{"from": "letters", "orderBy": [["createdAt", "desc"]], "limit": 5, "startAfter": "\#(first.documentPaths.last!)"}"#))
            #expect(more.documentPaths.count == 5 && Set(more.documentPaths).isDisjoint(with: first.documentPaths))
            let times = (first.json?["documents"]).map { json -> [String] in
                guard case .array(let docs) = json else { return [] }
                return docs.compactMap { $0["data"]?["createdAt"]?["$timestamp"]?.stringValue }
            } ?? []
            #expect(times.count == 5 && times == times.sorted(by: >), "newest first")
            // Categories in their order, and letters of one category.
            #expect(try await bob.query(#"{"from": "categories", "orderBy": [["order", "asc"]]}"#).documentIDs
                    == ["love", "friendship", "work", "study", "family", "health"])
            let study = try hearth.expectAllowed(try await bob.query(
                #"{"from": "letters", "where": [["category", "==", "study"]], "orderBy": [["createdAt", "desc"]], "limit": 20}"#))
            #expect(study.documentPaths.first == "letters/\(id)")
            // The profile's "my letters" comes from the private index; nobody else may list it.
            #expect(try await tess.query(#"{"from": "users/\#(uid)/letters", "orderBy": [["createdAt", "desc"]]}"#).documentIDs == [id])
            try hearth.expectDenied(try await bob.query(#"{"from": "users/\#(uid)/letters"}"#), "listing another's index")
            try hearth.expectDenied(try await bob.query(#"{"from": {"collectionGroup": "letters"}}"#), "a collection-group query on letters")
            try hearth.expectDenied(try await anonymous.query(home), "a visitor's timeline")

            // Reply, report, and moderation.
            let replied = try hearth.expectAllowed(try await bob.post("/v1/docs/letters/\(id)/replies",
                #"{"content": "Sleep first, revise after. You know more than you think.", "createdAt": \#(Self.now), "report": false}"#))
            let reply = try #require(replied.json?["path"]?.stringValue)
            try hearth.expectDenied(try await bob.post("/v1/docs/letters/\(id)/replies",
                                                       #"{"content": "reported already", "createdAt": \#(Self.now), "report": true}"#))
            try hearth.expectDenied(try await bob.patch("/v1/docs/\(reply)", #"{"content": "edited"}"#), "editing a reply")
            let (moderator, _) = try await hearth.signIn("mod")
            try hearth.expectDenied(try await moderator.delete("/v1/docs/\(reply)"), "removing an unreported reply")
            try hearth.expectAllowed(try await tess.patch("/v1/docs/\(reply)", #"{"report": true}"#), "reporting a reply")
            try hearth.expectDenied(try await tess.patch("/v1/docs/\(reply)", #"{"report": false}"#), "un-reporting")
            try hearth.expectAllowed(try await moderator.delete("/v1/docs/\(reply)"), "a moderator removes a reported reply")
            let second = try hearth.expectAllowed(try await bob.post("/v1/docs/letters/\(id)/replies",
                #"{"content": "Good luck!", "createdAt": \#(Self.now), "report": false}"#))

            // The number of replies, through an aggregate.
            let count = try hearth.expectAllowed(try await tess.aggregate(
                #"{"query": {"from": "letters/\#(id)/replies"}, "aggregations": {"replies": {"count": {}}}}"#))
            #expect(count.json?["result"]?["replies"] == .int(1))
            // Replies listed page by page (the author's view of them).
            let page = try hearth.expectAllowed(try await tess.get("/v1/docs/letters/\(id)/replies?pageSize=10"))
            guard case .array(let replies)? = page.json?["documents"] else { throw ExpectationFailure("no replies listed") }
            #expect(replies.map { $0["path"] } == [second.json?["path"]])

            // Withdraw: the letter with its replies (recursive), then the index entry.
            try hearth.expectDenied(try await bob.delete("/v1/docs/letters/\(id)?recursive=true"), "withdrawing another's letter")
            #expect(try await tess.delete("/v1/docs/letters/\(id)?recursive=true").status == 204)
            try hearth.expectAllowed(try await tess.delete("/v1/docs/users/\(uid)/letters/\(id)"))
            let admin = hearth.client()
            #expect(try await admin.get("/v1/docs/letters/\(id)").status == 404)
            #expect(try await admin.get("/v1/docs/\(try #require(second.json?["path"]?.stringValue))").status == 404)

            try hearth.expectDenied(try await anonymous.get("/v1/docs/categories/love"), "a visitor reads categories")
            #expect(try await tess.post("/v1/auth/logout").status == 204)
            #expect(try await tess.get("/v1/docs/categories/love").status == 401)
            #expect(try await anonymous.post("/v1/auth/password-reset", HearthClient.body([("email", "tess@example.com")])).status == 202)
            let token = try await hearth.outboxToken(to: "tess@example.com")
            try hearth.expectAllowed(try await anonymous.post("/v1/auth/password-reset/confirm",
                                                              HearthClient.body([("token", token), ("newPassword", "tess-password-2")])))
            _ = try await anonymous.loggedIn("tess@example.com", "tess-password-2")
            for client in [anonymous, tess, bob, moderator, admin] { await client.close() }
        }
    }
}
