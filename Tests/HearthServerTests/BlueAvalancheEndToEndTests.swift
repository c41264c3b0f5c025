import HearthCore
import HearthTesting
import Testing
import HTTPTypes

/// Blue Avalanche over real HTTP, as docs/apps/blue-avalanche.md maps its stories: accounts and settings,
/// connected accounts whose tokens only their owner reads, scheduled posts to connected networks only, the
/// publisher (admin key) marking a post published, and deleting the account with its data; a post's media
/// uploaded to the author's folder and named by the post.
@Suite(.serialized) struct BlueAvalancheEndToEndTests {
    static let now = #"{"$serverTimestamp": true}"#

    static func inDays(_ days: Double) -> String {
        let t = Timestamp(microseconds: Timestamp.now().microseconds + Int64(days * 86_400 * 1_000_000))
        return #"{"$timestamp": "\#(t.rfc3339)"}"#
    }

    static func post(_ author: String, _ networks: String, status: String = "scheduled", at: String = inDays(1),
                     media: [String]? = nil) -> String {
        let attached = media.map { #", "media": \#(JSON.array($0.map(JSON.string)).text)"# } ?? ""
        return """
        {"author": "\(author)", "content": "Spring sale starts Monday", "networks": \(networks),
         "scheduledAt": \(at), "status": "\(status)", "createdAt": \(now), "updatedAt": \(now)\(attached)}
        """
    }

    static let mebibyte = 1024 * 1024

    /// Media: uploaded by the author to `media/<uid>/`, named by the post, read by the author and the
    /// publisher (admin key) alone; images up to 10 MiB and videos up to 100 MiB by declared type.
    @Test func mediaIsUploadedToTheAuthorsFolderAndNamedByThePost() async throws {
        try await Harness.with(rules: "rules/blue-avalanche.rules", fixtures: "fixtures/blue-avalanche.json", indexes: "indexes/blue-avalanche.json") { hearth in
            let (maria, _) = try await hearth.signIn("maria")
            let (james, jamesSession) = try await hearth.signIn("james")
            let (anonymous, admin) = (hearth.client(as: .nobody), hearth.client())
            let photo = try Harness.projectBytes("fixtures/files/blue-avalanche/maria-porch.png")
            let path = "media/maria/open-house.png"

            let uploaded = try hearth.expectAllowed(try await maria.putFile(path, photo, contentType: "image/png"), "uploading an image")
            #expect(uploaded.status == 201 && uploaded.json?["size"] == .int(Int64(photo.count)))
            let video = try hearth.expectAllowed(try await maria.putFile("media/maria/tour.mp4", [UInt8](repeating: 7, count: 11 * Self.mebibyte),
                                                                         contentType: "video/mp4"), "a video over the image limit")
            #expect(video.json?["size"] == .int(Int64(11 * Self.mebibyte)))
            let created = try hearth.expectAllowed(try await maria.post("/v1/docs/posts",
                                                                        Self.post("maria", #"["twitter"]"#, media: [path, "media/maria/tour.mp4"])))
            let post = try #require(created.json?["path"]?.stringValue)
            try hearth.expectDenied(try await maria.post("/v1/docs/posts", Self.post("maria", #"["twitter"]"#, media: ["media/james/meal.png"])),
                                    "a post naming another user's media")
            try hearth.expectDenied(try await maria.post("/v1/docs/posts", Self.post("maria", #"["twitter"]"#,
                                                                                     media: ["https://media.example.com/maria/porch.jpg"])), "a URL")

            // The author reads what her post names; so does the publisher; nobody else.
            let named = try #require(try await maria.get("/v1/docs/\(post)").json?["data"]?["media"]?[0]?.stringValue)
            for reader in [maria, admin] {
                let read = try hearth.expectAllowed(try await reader.get("/v1/files/\(named)"), "reading the post's image")
                #expect(read.body == photo && read.header("Content-Type") == "image/png")
            }
            for stranger in [james, anonymous] { try hearth.expectDenied(try await stranger.get("/v1/files/\(named)"), "another's media") }
            // The post queue shows the image small, to the same readers.
            try await hearth.expectThumbnail(named, width: 12, height: 12, readers: [maria, admin], strangers: [james, anonymous],
                                             "the post queue's thumbnail")
            // The fixture's media are the fixture's images.
            #expect(try await maria.get("/v1/files/media/maria/staging.png").body
                    == Harness.projectBytes("fixtures/files/blue-avalanche/maria-staging.png"))
            let library = try hearth.expectAllowed(try await maria.get("/v1/files?prefix=media/maria/"), "the media library")
            guard case .array(let files)? = library.json?["files"] else { throw ExpectationFailure("no listing: \(library.text)") }
            let names = files.compactMap { $0["path"]?.stringValue }
            #expect(names.contains(path), "\(names)")
            try hearth.expectDenied(try await james.get("/v1/files?prefix=media/maria/"), "listing another's media")

            try await hearth.expectUploadsRefused([
                RefusedUpload("an image over 10 MiB", "media/maria/huge.png", size: 10 * Self.mebibyte + 1, contentType: "image/png"),
                RefusedUpload("a PDF", "media/maria/flyer.pdf", size: 2000, contentType: "application/pdf"),
                RefusedUpload("no declared type", "media/maria/raw", size: 2000, contentType: nil),
                RefusedUpload("a replacement that is no image", path, size: 2000, contentType: "text/plain"),
                RefusedUpload("into another user's folder", "media/maria/x.png", size: 100, contentType: "image/png",
                              as: .token(jamesSession.token)),
                RefusedUpload("over another user's image", path, size: 100, contentType: "image/png", as: .token(jamesSession.token)),
                RefusedUpload("by a guest", "media/maria/x.png", size: 100, contentType: "image/png", as: .nobody),
                RefusedUpload("outside the media folder", "avatars/maria/me.png", size: 100, contentType: "image/png"),
            ], by: maria)
            try hearth.expectDenied(try await james.delete("/v1/files/\(path)"), "deleting another's media")

            // Replace the image (the post keeps naming it), then delete it and the video.
            let staging = try Harness.projectBytes("fixtures/files/blue-avalanche/maria-staging.png")
            try await hearth.expectReplacedThenDeleted(path, with: staging, contentType: "image/png", owner: maria, reader: maria)
            #expect(try await maria.delete("/v1/files/media/maria/tour.mp4").status == 204)
            for client in [maria, james, anonymous, admin] { await client.close() }
        }
    }

    @Test func theStoriesOfBlueAvalanche() async throws {
        try await Harness.with(rules: "rules/blue-avalanche.rules", fixtures: "fixtures/blue-avalanche.json", indexes: "indexes/blue-avalanche.json") { hearth in
            let anonymous = hearth.client(as: .nobody)
            let signUp = try await anonymous.signedUp("ann@example.com", "ann-password-1")
            let uid = signUp.uid
            _ = try await anonymous.loggedIn("ann@example.com", "ann-password-1")
            let session = try #require(SignedIn(try await anonymous.refresh(signUp.refreshToken)))
            let ann = hearth.client(as: .token(session.token))
            #expect(try await ann.get("/v1/auth/me").json?["uid"]?.stringValue == uid)
            try hearth.expectAllowed(try await ann.put("/v1/docs/users/\(uid)",
                                                       #"{"email": "ann@example.com", "timeZone": "Europe/Paris", "reminderHour": 9, "createdAt": \#(Self.now)}"#))
            try hearth.expectDenied(try await ann.patch("/v1/docs/users/\(uid)", #"{"reminderHour": 25}"#), "an hour out of range")

            // Connect an account: the token is readable by its owner alone.
            let outlets = "/v1/docs/users/\(uid)/outlets"
            try hearth.expectAllowed(try await ann.put("\(outlets)/twitter", """
                {"network": "twitter", "handle": "@ann", "targetUrl": "https://twitter.com/ann", "authToken": "tw-secret-1",
                 "tokenExpiresAt": \(Self.inDays(30)), "connectedAt": \(Self.now)}
                """), "connecting twitter")
            try hearth.expectDenied(try await ann.put("\(outlets)/myspace", """
                {"network": "myspace", "handle": "@ann", "targetUrl": "https://myspace.com/ann", "authToken": "x",
                 "tokenExpiresAt": \(Self.inDays(30)), "connectedAt": \(Self.now)}
                """), "an unknown network")
            try hearth.expectDenied(try await ann.put("\(outlets)/facebook", """
                {"network": "facebook", "handle": "@ann", "targetUrl": "https://facebook.com/ann", "authToken": "x",
                 "tokenExpiresAt": \(Self.inDays(-1)), "connectedAt": \(Self.now)}
                """), "an expired token")
            let (maria, _) = try await hearth.signIn("maria")
            try hearth.expectDenied(try await maria.get("\(outlets)/twitter"), "reading another user's token")
            try hearth.expectDenied(try await maria.get("\(outlets)?pageSize=10"), "listing another user's outlets")
            try hearth.expectDenied(try await ann.get("/v1/docs/users/maria/outlets/twitter"))
            let mine = try hearth.expectAllowed(try await ann.get("\(outlets)?pageSize=10"), "the connection screen")
            guard case .array(let connected)? = mine.json?["documents"] else { throw ExpectationFailure("no outlets listed") }
            #expect(connected.map { $0["data"]?["authToken"]?.stringValue } == ["tw-secret-1"])
            try hearth.expectAllowed(try await ann.patch("\(outlets)/twitter",
                                                         #"{"authToken": "tw-secret-2", "tokenExpiresAt": \#(Self.inDays(60))}"#), "reconnecting")

            // Compose posts: only to connected networks, in one's own name, scheduled, not in the past.
            let created = try hearth.expectAllowed(try await ann.post("/v1/docs/posts", Self.post(uid, #"["twitter"]"#)))
            let post = try #require(created.json?["path"]?.stringValue)
            try hearth.expectDenied(try await ann.post("/v1/docs/posts", Self.post(uid, #"["twitter", "facebook"]"#)), "a network not connected")
            try hearth.expectDenied(try await ann.post("/v1/docs/posts", Self.post("maria", #"["twitter"]"#)), "a post in another's name")
            try hearth.expectDenied(try await ann.post("/v1/docs/posts", Self.post(uid, #"["twitter"]"#, status: "published")))
            try hearth.expectDenied(try await ann.post("/v1/docs/posts", Self.post(uid, #"["twitter"]"#, at: Self.inDays(-1))), "backdated")
            // Connecting and posting in one commit works.
            try hearth.expectAllowed(try await ann.post("/v1/commit", """
                {"writes": [{"create": "users/\(uid)/outlets/linkedin", "data": {"network": "linkedin", "handle": "ann",
                   "targetUrl": "https://linkedin.com/in/ann", "authToken": "li-1", "tokenExpiresAt": \(Self.inDays(30)), "connectedAt": \(Self.now)}},
                  {"create": "posts/\(makeAutoID())", "data": \(Self.post(uid, #"["linkedin", "twitter"]"#))}]}
                """), "connecting and posting in one commit")

            // Statistics (newest first, the author pinned) and analytics: the count through an aggregate, the
            // average time between posts from the first and last (the gaps telescope).
            let stats = try hearth.expectAllowed(try await ann.query(
                #"{"from": "posts", "where": [["author", "==", "\#(uid)"]], "orderBy": [["createdAt", "desc"]], "limit": 20}"#))
            #expect(stats.documentPaths.count == 2 && stats.documentPaths.last == post)
            try hearth.expectDenied(try await ann.query(#"{"from": "posts", "limit": 20}"#), "posts without the author pinned")
            let mariaCount = try hearth.expectAllowed(try await maria.aggregate(
                #"{"query": {"from": "posts", "where": [["author", "==", "maria"]]}, "aggregations": {"posts": {"count": {}}}}"#))
            guard case .int(let n)? = mariaCount.json?["result"]?["posts"] else { throw ExpectationFailure("no count") }
            func edge(_ direction: String) async throws -> Int64 {
                let r = try await maria.query(
                    #"{"from": "posts", "where": [["author", "==", "maria"]], "orderBy": [["scheduledAt", "\#(direction)"]], "limit": 1}"#)
                guard case .array(let docs)? = r.json?["documents"], let text = docs.first?["data"]?["scheduledAt"]?["$timestamp"]?.stringValue,
                      let t = Timestamp(rfc3339: text) else { throw ExpectationFailure("no post: \(r.text)") }
                return t.microseconds
            }
            let (oldest, newest) = (try await edge("asc"), try await edge("desc"))
            #expect(n > 1 && newest > oldest)
            let averageGapHours = Double(newest - oldest) / Double(n - 1) / 3_600_000_000
            #expect(averageGapHours > 0, "maria posts every \(averageGapHours) h on average")
            try hearth.expectDenied(try await ann.aggregate(
                #"{"query": {"from": "posts", "where": [["author", "==", "maria"]]}, "aggregations": {"posts": {"count": {}}}}"#), "another's analytics")

            // Edit while scheduled; the publisher (admin key) marks it published; then it is frozen.
            try hearth.expectAllowed(try await ann.patch("/v1/docs/\(post)", #"{"content": "Spring sale starts Tuesday", "updatedAt": \#(Self.now)}"#))
            try hearth.expectDenied(try await maria.get("/v1/docs/\(post)"), "reading another's post")
            try hearth.expectDenied(try await maria.delete("/v1/docs/\(post)"), "deleting another's post")
            let admin = hearth.client()
            // The author has the post open and sees the publisher mark it published, live.
            let live = try await ListenClient.watching(post, port: hearth.port, token: session.token)
            try hearth.expectAllowed(try await admin.patch("/v1/docs/\(post)", #"{"status": "published", "publishedAt": \#(Self.now)}"#))
            #expect(try await live.expectChange("modified", of: post)["data"]?["status"] == .string("published"))
            await live.close()
            try hearth.expectDenied(try await ann.patch("/v1/docs/\(post)", #"{"content": "too late", "updatedAt": \#(Self.now)}"#),
                                    "editing a published post")
            try hearth.expectDenied(try await anonymous.get("/v1/docs/\(post)"))

            // Disconnect, then delete the account: settings and outlets (recursive), posts, the account.
            try hearth.expectAllowed(try await ann.delete("\(outlets)/twitter"))
            #expect(try await ann.get("\(outlets)/twitter").status == 404)
            #expect(try await ann.delete("/v1/docs/users/\(uid)?recursive=true").status == 204)
            #expect(try await admin.get("\(outlets)/linkedin").status == 404)
            try hearth.expectAllowed(try await ann.delete("/v1/docs/\(post)"))

            // Log out and password reset, on a fixture account.
            let (james, _) = try await hearth.signIn("james")
            #expect(try await james.post("/v1/auth/logout").status == 204)
            #expect(try await james.get("/v1/docs/users/james").status == 401)
            #expect(try await anonymous.post("/v1/auth/password-reset", HearthClient.body([("email", "james@example.com")])).status == 202)
            let token = try await hearth.outboxToken(to: "james@example.com")
            try hearth.expectAllowed(try await anonymous.post("/v1/auth/password-reset/confirm",
                                                              HearthClient.body([("token", token), ("newPassword", "james-password-2")])))
            _ = try await anonymous.loggedIn("james@example.com", "james-password-2")

            #expect(try await ann.request(.delete, "/v1/auth/me").status == 204)
            #expect(try await anonymous.logIn("ann@example.com", "ann-password-1").status == 401)
            for client in [anonymous, ann, maria, admin, james] { await client.close() }
        }
    }
}
