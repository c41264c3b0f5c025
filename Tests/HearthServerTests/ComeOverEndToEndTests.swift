import HearthCore
import HearthTesting
import Testing

/// ComeOver over real HTTP, as docs/apps/comeover.md maps its stories: accounts, creating and editing an
/// event, its invitation list, what an invitee may and may not do, and deleting an event with its
/// invitations in one recursive delete; the event's photo, guarded by the event document.
@Suite(.serialized) struct ComeOverEndToEndTests {
    static let now = #"{"$serverTimestamp": true}"#

    /// The event's photo at `events/<eventId>/`: uploaded by the event's author once the event exists, named
    /// by its `image`, read by the author and the users invited with an account (the storage rules consult
    /// the event and the invitation documents), deleted before the event.
    @Test func anEventsPhotoIsSeenByItsInvitees() async throws {
        try await Harness.with(rules: "rules/comeover.rules", fixtures: "fixtures/comeover.json", indexes: "indexes/comeover.json") { hearth in
            let (nina, _) = try await hearth.signIn("nina")
            let (omar, omarSession) = try await hearth.signIn("omar")
            let (sam, _) = try await hearth.signIn("sam")
            let anonymous = hearth.client(as: .nobody)
            let photo = try Harness.projectBytes("fixtures/files/comeover/housewarming.png")

            // The photo's folder is the event's: no upload before the event exists.
            let event = "events/" + makeAutoID()
            let path = "\(event)/photo.png"
            try hearth.expectDenied(try await nina.putFile(path, photo, contentType: "image/png"), "a photo for an event not yet created")
            try hearth.expectAllowed(try await nina.put("/v1/docs/\(event)", """
                {"author": "nina", "title": "Housewarming", "description": "Come see the new place.",
                 "startsAt": {"$timestamp": "2026-12-12T18:00:00Z"}, "createdAt": \(Self.now), "updatedAt": \(Self.now)}
                """), "creating the event")
            #expect(try hearth.expectAllowed(try await nina.putFile(path, photo, contentType: "image/png"), "uploading the photo").status == 201)
            try hearth.expectAllowed(try await nina.patch("/v1/docs/\(event)", #"{"image": "\#(path)", "updatedAt": \#(Self.now)}"#))
            try hearth.expectDenied(try await nina.patch("/v1/docs/\(event)",
                                                         #"{"image": "events/vY6oJ2jNalbuy0yTK0gP/game-night.png", "updatedAt": \#(Self.now)}"#),
                                    "another event's photo")
            try hearth.expectAllowed(try await nina.put("/v1/docs/\(event)/invitations/omar",
                                                        #"{"name": "Omar", "uid": "omar", "addedAt": \#(Self.now)}"#), "inviting omar")

            // The invitee reads the event and its photo; a user not invited and a guest read neither.
            let named = try #require(try await omar.get("/v1/docs/\(event)").json?["data"]?["image"]?.stringValue)
            for reader in [nina, omar] {
                #expect(try hearth.expectAllowed(try await reader.get("/v1/files/\(named)"), "the author or an invitee").body == photo)
            }
            for stranger in [sam, anonymous] { try hearth.expectDenied(try await stranger.get("/v1/files/\(named)"), "someone not invited") }
            // The event list shows the photo small: the thumbnail follows the photo's rules.
            try await hearth.expectThumbnail(named, width: 12, height: 12, readers: [nina, omar], strangers: [sam, anonymous],
                                             "the event list's thumbnail")
            try hearth.expectAllowed(try await nina.get("/v1/files?prefix=\(event)/"), "the author listing the event's folder")
            try hearth.expectDenied(try await omar.get("/v1/files?prefix=\(event)/"), "an invitee listing the event's folder")
            // A fixture event's photo, as its invitee sees it.
            #expect(try await omar.get("/v1/files/events/9O7mqbw0XTbH7Lt5h3y2/cookies.png").body
                    == Harness.projectBytes("fixtures/files/comeover/cookies.png"))

            try await hearth.expectUploadsRefused([
                RefusedUpload("a photo over 5 MiB", "\(event)/big.png", size: 5 * 1024 * 1024 + 1, contentType: "image/png"),
                RefusedUpload("a photo that is no image", "\(event)/flyer.pdf", size: 1000, contentType: "application/pdf"),
                RefusedUpload("a replacement that is no image", path, size: 1000, contentType: "video/mp4"),
                RefusedUpload("an invitee's upload", "\(event)/mine.png", size: 100, contentType: "image/png", as: .token(omarSession.token)),
                RefusedUpload("an invitee's replacement", path, size: 100, contentType: "image/png", as: .token(omarSession.token)),
                RefusedUpload("a guest's upload", "\(event)/mine.png", size: 100, contentType: "image/png", as: .nobody),
                RefusedUpload("into another author's event", "events/vY6oJ2jNalbuy0yTK0gP/mine.png", size: 100, contentType: "image/png"),
            ], by: nina)
            try hearth.expectDenied(try await omar.delete("/v1/files/\(path)"), "an invitee deleting the photo")

            // A new photo (the invitee sees the new bytes), then the photo and the event are deleted, photo first.
            try await hearth.expectReplacedThenDeleted(path, with: Harness.projectBytes("fixtures/files/comeover/tacos.png"),
                                                       contentType: "image/png", owner: nina, reader: omar)
            #expect(try await nina.delete("/v1/docs/\(event)?recursive=true").status == 204)
            for client in [nina, omar, sam, anonymous] { await client.close() }
        }
    }

    @Test func theStoriesOfComeOver() async throws {
        try await Harness.with(rules: "rules/comeover.rules", fixtures: "fixtures/comeover.json", indexes: "indexes/comeover.json") { hearth in
            let anonymous = hearth.client(as: .nobody)
            // Create an account and its profile; stay logged in across a restart (refresh, then who am I).
            let signUp = try await anonymous.signedUp("rita@example.com", "rita-password-1", displayName: "Rita")
            let session = try #require(SignedIn(try await anonymous.refresh(signUp.refreshToken)))
            let rita = hearth.client(as: .token(session.token))
            try hearth.expectAllowed(try await rita.put("/v1/docs/users/\(signUp.uid)",
                                                        #"{"displayName": "Rita", "username": "rita_k", "createdAt": \#(Self.now)}"#))
            #expect(try await rita.get("/v1/auth/me").json?["email"]?.stringValue == "rita@example.com")
            let (omar, omarSession) = try await hearth.signIn("omar")
            let (sam, _) = try await hearth.signIn("sam")

            // Create an event, view it, update its description.
            let created = try hearth.expectAllowed(try await rita.post("/v1/docs/events", """
                {"author": "\(signUp.uid)", "title": "Board games", "description": "Bring snacks",
                 "startsAt": {"$timestamp": "2026-12-05T19:00:00Z"}, "location": "Rita's place",
                 "createdAt": \(Self.now), "updatedAt": \(Self.now)}
                """), "creating an event")
            let event = try #require(created.json?["path"]?.stringValue)
            try hearth.expectDenied(try await rita.post("/v1/docs/events", """
                {"author": "omar", "title": "Forged", "description": "", "startsAt": {"$timestamp": "2026-12-05T19:00:00Z"},
                 "createdAt": \(Self.now), "updatedAt": \(Self.now)}
                """), "an event in someone else's name")
            try hearth.expectDenied(try await rita.post("/v1/docs/events", """
                {"author": "\(signUp.uid)", "title": "", "description": "", "startsAt": "tomorrow",
                 "createdAt": \(Self.now), "updatedAt": \(Self.now)}
                """), "an event without a title or a start time")
            try hearth.expectAllowed(try await rita.patch("/v1/docs/\(event)",
                                                          #"{"description": "Bring snacks and a game", "updatedAt": \#(Self.now)}"#))
            #expect(try await rita.get("/v1/docs/\(event)").json?["data"]?["description"]?.stringValue == "Bring snacks and a game")

            // The invitation list: a guest by name, and a user with an account at their uid.
            try hearth.expectAllowed(try await rita.post("/v1/docs/\(event)/invitations",
                                                         #"{"name": "Grandma", "email": "gran@example.com", "addedAt": \#(Self.now)}"#))
            try hearth.expectAllowed(try await rita.put("/v1/docs/\(event)/invitations/omar",
                                                        #"{"name": "Omar", "uid": "omar", "addedAt": \#(Self.now)}"#))
            try hearth.expectDenied(try await rita.put("/v1/docs/\(event)/invitations/someone",
                                                       #"{"name": "Omar", "uid": "omar", "addedAt": \#(Self.now)}"#),
                                    "an account invitation not stored at the uid")
            try hearth.expectDenied(try await rita.post("/v1/docs/\(event)/invitations",
                                                        #"{"name": "Bad", "email": "not an email", "addedAt": \#(Self.now)}"#))
            try hearth.expectDenied(try await rita.post("/v1/docs/events/nosuchevent/invitations",
                                                        #"{"name": "Ghost", "addedAt": \#(Self.now)}"#), "an invitation to a missing event")
            let list = try hearth.expectAllowed(try await rita.get("/v1/docs/\(event)/invitations?pageSize=10"))
            guard case .array(let guests)? = list.json?["documents"] else { throw ExpectationFailure("no guest list") }
            #expect(guests.count == 2)

            // The invitee reads the event and their own invitation, and nothing else; a stranger reads nothing.
            try hearth.expectAllowed(try await omar.get("/v1/docs/\(event)"), "the invitee reads the event")
            // The invitee has the event open and sees the author's change live.
            let live = try await ListenClient.watching(event, port: hearth.port, token: omarSession.token)
            try hearth.expectAllowed(try await rita.patch("/v1/docs/\(event)", #"{"location": "The park", "updatedAt": \#(Self.now)}"#))
            #expect(try await live.expectChange("modified", of: event)["data"]?["location"] == .string("The park"))
            await live.close()
            try hearth.expectAllowed(try await omar.get("/v1/docs/\(event)/invitations/omar"))
            try hearth.expectDenied(try await omar.get("/v1/docs/\(event)/invitations?pageSize=10"), "the invitee reads the list")
            try hearth.expectDenied(try await omar.patch("/v1/docs/\(event)", #"{"title": "Mine now", "updatedAt": \#(Self.now)}"#))
            try hearth.expectDenied(try await omar.delete("/v1/docs/\(event)"), "the invitee deletes the event")
            try hearth.expectDenied(try await omar.post("/v1/docs/\(event)/invitations", #"{"name": "Friend", "addedAt": \#(Self.now)}"#))
            try hearth.expectDenied(try await omar.delete("/v1/docs/\(event)/invitations/omar"), "the invitee removes a guest")
            try hearth.expectDenied(try await sam.get("/v1/docs/\(event)"), "a stranger reads the event")
            try hearth.expectDenied(try await anonymous.get("/v1/docs/\(event)"))
            try hearth.expectDenied(try await sam.put("/v1/docs/users/\(signUp.uid)",
                                                      #"{"displayName": "Hacked", "username": "rita_k", "createdAt": \#(Self.now)}"#))

            // My Events, soonest first, and the guest count; the query must pin the author.
            let myEvents = try hearth.expectAllowed(try await rita.query(
                #"{"from": "events", "where": [["author", "==", "\#(signUp.uid)"]], "orderBy": [["startsAt", "asc"]], "limit": 20}"#))
            #expect(myEvents.documentPaths == [event])
            let omars = try await omar.query(#"{"from": "events", "where": [["author", "==", "omar"]], "orderBy": [["startsAt", "asc"]], "limit": 3}"#)
            #expect(omars.documentPaths.count == 3)
            try hearth.expectDenied(try await rita.query(#"{"from": "events", "orderBy": [["startsAt", "asc"]]}"#), "events without the author pinned")
            let count = try hearth.expectAllowed(try await rita.aggregate(
                #"{"query": {"from": "\#(event)/invitations"}, "aggregations": {"guests": {"count": {}}}}"#))
            #expect(count.json?["result"]?["guests"] == .int(2))
            try hearth.expectDenied(try await omar.aggregate(
                #"{"query": {"from": "\#(event)/invitations"}, "aggregations": {"guests": {"count": {}}}}"#), "an invitee counts the guests")
            // Events I'm invited to: a collection-group query pinned to my uid.
            let invited = try hearth.expectAllowed(try await omar.query(
                #"{"from": {"collectionGroup": "invitations"}, "where": [["uid", "==", "omar"]]}"#))
            #expect(invited.documentPaths.contains("\(event)/invitations/omar"))
            try hearth.expectDenied(try await omar.query(#"{"from": {"collectionGroup": "invitations"}}"#), "every invitation")
            // Find a user to invite by username.
            #expect(try await rita.query(#"{"from": "users", "where": [["username", "==", "rita_k"]], "limit": 1}"#).documentIDs == [signUp.uid])

            // Remove one guest, then delete the event with its invitations.
            try hearth.expectAllowed(try await rita.delete("/v1/docs/\(event)/invitations/omar"))
            try hearth.expectDenied(try await omar.get("/v1/docs/\(event)"), "a removed guest reads the event")
            try hearth.expectDenied(try await omar.delete("/v1/docs/\(event)?recursive=true"), "a guest's recursive delete")
            #expect(try await rita.delete("/v1/docs/\(event)?recursive=true").status == 204)
            let admin = hearth.client()
            #expect(try await admin.get("/v1/docs/\(event)").status == 404)
            let left = try await admin.get("/v1/docs/\(event)/invitations")
            #expect(left.status == 200 && (left.json?["documents"] ?? .array([])) == .array([]), "\(left.text)")

            // Log out, and reset a forgotten password.
            #expect(try await rita.post("/v1/auth/logout").status == 204)
            #expect(try await rita.get("/v1/auth/me").status == 401)
            #expect(try await anonymous.post("/v1/auth/password-reset", HearthClient.body([("email", "rita@example.com")])).status == 202)
            let token = try await hearth.outboxToken(to: "rita@example.com")
            try hearth.expectAllowed(try await anonymous.post("/v1/auth/password-reset/confirm",
                                                              HearthClient.body([("token", token), ("newPassword", "rita-password-2")])))
            _ = try await anonymous.loggedIn("rita@example.com", "rita-password-2")
            for client in [anonymous, rita, omar, sam, admin] { await client.close() }
        }
    }
}

extension ComeOverEndToEndTests {
    /// The gift wish list and the potluck's food list: the author adds items (with the event, in one commit,
    /// or later), a guest with an account claims one in their own name and gives it back, and nobody claims an
    /// item another guest brings; someone not invited sees no list.
    @Test func guestsClaimWhatTheyBring() async throws {
        try await Harness.with(rules: "rules/comeover.rules", fixtures: "fixtures/comeover.json", indexes: "indexes/comeover.json") { hearth in
            let (nina, _) = try await hearth.signIn("nina")
            let (omar, _) = try await hearth.signIn("omar")
            let (sam, _) = try await hearth.signIn("sam")
            let event = "events/" + makeAutoID()
            try hearth.expectAllowed(try await nina.post("/v1/commit", """
                {"writes": [
                  {"create": "\(event)", "data": {"author": "nina", "title": "Friendsgiving", "description": "Potluck style.",
                   "startsAt": {"$timestamp": "2026-11-26T18:00:00Z"}, "createdAt": \(Self.now), "updatedAt": \(Self.now)}},
                  {"create": "\(event)/items/pie", "data": {"list": "food", "name": "Pumpkin pie", "addedAt": \(Self.now)}},
                  {"create": "\(event)/items/wine", "data": {"list": "food", "name": "Red wine", "addedAt": \(Self.now)}},
                  {"create": "\(event)/invitations/omar", "data": {"name": "Omar", "uid": "omar", "addedAt": \(Self.now)}},
                  {"create": "\(event)/invitations/sam", "data": {"name": "Sam", "uid": "sam", "addedAt": \(Self.now)}}
                ]}
                """), "the event with its food list and guests, in one commit")
            try hearth.expectAllowed(try await nina.put("/v1/docs/\(event)/items/vase", #"{"list": "gifts", "name": "A vase", "addedAt": \#(Self.now)}"#))

            let food = #"{"from": "\#(event)/items", "where": [["list", "==", "food"]], "orderBy": [["addedAt", "asc"]]}"#
            let seen = try hearth.expectAllowed(try await omar.post("/v1/query", food), "a guest reads the food list")
            if case .array(let documents)? = seen.json?["documents"] { #expect(documents.count == 2) } else { Issue.record("\(seen.text)") }
            try hearth.expectAllowed(try await omar.patch("/v1/docs/\(event)/items/pie", #"{"claimedBy": "omar", "claimedByName": "Omar"}"#),
                                     "omar brings the pie")
            try hearth.expectDenied(try await sam.patch("/v1/docs/\(event)/items/pie", #"{"claimedBy": "sam", "claimedByName": "Sam"}"#),
                                    "sam takes over omar's pie")
            try hearth.expectDenied(try await sam.patch("/v1/docs/\(event)/items/wine", #"{"claimedBy": "omar", "claimedByName": "Omar"}"#),
                                    "sam claims the wine in omar's name")
            try hearth.expectAllowed(try await sam.patch("/v1/docs/\(event)/items/wine", #"{"claimedBy": "sam", "claimedByName": "Sam"}"#),
                                     "sam brings the wine")
            try hearth.expectAllowed(try await omar.patch("/v1/docs/\(event)/items/pie", #"{"claimedBy": {"$delete": true}, "claimedByName": {"$delete": true}}"#),
                                     "omar gives the pie back")
            let pie = try await nina.get("/v1/docs/\(event)/items/pie").json?["data"]
            #expect(pie?["claimedBy"] == nil && pie?["name"]?.stringValue == "Pumpkin pie", "\(String(describing: pie))")

            // The invitation withdrawn, sam no longer sees the lists; a user never invited never did.
            try hearth.expectAllowed(try await nina.delete("/v1/docs/\(event)/invitations/sam"))
            try hearth.expectDenied(try await sam.post("/v1/query", food), "a guest no longer invited")
            try hearth.expectDenied(try await sam.get("/v1/docs/\(event)/items/vase"), "nor one item")
            // Deleting the event takes its lists with it.
            try hearth.expectAllowed(try await nina.delete("/v1/docs/\(event)?recursive=true"))
            #expect(try await hearth.client().get("/v1/docs/\(event)/items/wine").status == 404)
            for client in [nina, omar, sam] { await client.close() }
        }
    }
}

extension ComeOverEndToEndTests {
    /// "User can delete their account", as comeover.md maps it: each of the user's events goes (its photo,
    /// then the event with its invitations and lists in one recursive delete), then the account; the user's
    /// token stops working at once and their events are gone for their invitees.
    @Test func anAccountIsDeletedWithItsEvents() async throws {
        try await Harness.with(rules: "rules/comeover.rules", fixtures: "fixtures/comeover.json", indexes: "indexes/comeover.json") { hearth in
            let (omar, _) = try await hearth.signIn("omar")
            let mine = try hearth.expectAllowed(try await omar.post("/v1/query", #"{"from": "events", "where": [["author", "==", "omar"]]}"#),
                                                "my events")
            guard case .array(let events)? = mine.json?["documents"] else { throw ExpectationFailure("no events: \(mine.text)") }
            #expect(events.count == 4)
            for event in events {
                let path = try #require(event["path"]?.stringValue)
                if let image = event["data"]?["image"]?.stringValue {
                    try hearth.expectAllowed(try await omar.delete("/v1/files/\(image)"), "the photo of \(path)")
                }
                try hearth.expectAllowed(try await omar.delete("/v1/docs/\(path)?recursive=true"), "\(path) with its invitations")
            }
            #expect(try await omar.delete("/v1/auth/me").status == 204)
            #expect(try await omar.get("/v1/auth/me").status == 401, "the deleted account's token stops at once")
            let admin = hearth.client()
            for event in events {
                #expect(try await admin.get("/v1/docs/\(try #require(event["path"]?.stringValue))").status == 404)
            }
            #expect(try await admin.get("/v1/files/events/vY6oJ2jNalbuy0yTK0gP/game-night.png").status == 404)
            await omar.close()
            await admin.close()
        }
    }
}
