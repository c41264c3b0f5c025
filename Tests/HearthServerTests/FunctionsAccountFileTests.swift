import Foundation
import HearthCore
import HearthServer
import HearthTesting
import HTTPTypes
import Testing

/// `user.*` and `file.*` triggers and identity tokens, delivered by the real server to a Standard Webhooks
/// receiver (`Tests/peers/webhook_receiver.py`, which verifies each signature with the `standardwebhooks`
/// library). One at a time: each starts a Python process.
@Suite(.serialized) struct FunctionsAccountFileTests {
    /// A functions file sending account and file events (under `photos/{uid}/{name}`) and the creations of
    /// `posts/{postId}` to `url`; the endpoint declares `identity` when given.
    static func functionsFile(url: String, secret: String, identity: String? = nil) throws -> String {
        let path = TestFolders.make() + "/functions.json"
        let text = """
            {"endpoints": {"app": {"url": "\(url)", "secret": "\(secret)"\(identity.map { ", \"identity\": \($0)" } ?? "")}},
             "triggers": [{"name": "userCreated", "on": "user.created", "endpoint": "app"},
                          {"name": "userDeleted", "on": "user.deleted", "endpoint": "app"},
                          {"name": "photoFinalized", "on": "file.finalized", "path": "photos/{uid}/{name}", "endpoint": "app"},
                          {"name": "photoDeleted", "on": "file.deleted", "path": "photos/{uid}/{name}", "endpoint": "app"},
                          {"name": "postCreated", "on": "document.created", "path": "posts/{postId}", "endpoint": "app"}]}
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `body` with a receiver and a server whose functions file points at it.
    static func with<T>(identity: String? = nil, configure more: (inout ServerConfiguration) -> Void = { _ in },
                        _ body: (WebhookTestReceiver, TestServer, HearthClient) async throws -> T) async throws -> T {
        try await WebhookTestReceiver.with(secret: FunctionsDeliveryTests.secret()) { receiver in
            let file = try Self.functionsFile(url: receiver.url, secret: receiver.secret, identity: identity)
            return try await TestServer.with(configure: {
                FunctionsDeliveryTests.configure(file)(&$0)
                $0.useTestAccounts()
                more(&$0)
            }) { server, client in
                try await body(receiver, server, client)
            }
        }
    }

    /// Every way into the server that makes or deletes an account: each is one account's event, exactly one.
    static let accountChanges: [(name: String, type: String, act: @Sendable (HearthClient) async throws -> String)] = [
        ("sign-up", "user.created", { client in try await client.signedUp("ann@example.com", "correct horse battery", displayName: "Ann").uid }),
        ("anonymous sign-in", "user.created", { client in
            try #require(try await client.post("/v1/auth/anonymous", "{}", as: .nobody).json?["user"]?["uid"]?.stringValue)
        }),
        ("admin create", "user.created", { client in
            try #require(try await client.post("/v1/admin/users", #"{"uid": "bob", "claims": {"role": "editor"}}"#).json?["uid"]?.stringValue)
        }),
        ("fixture", "user.created", { client in
            let body = #"{"users": [{"uid": "fix", "email": "fix@example.com", "password": "correct horse battery"}]}"#
            let status = try await client.post("/v1/admin/fixtures", body).status
            #expect(status == 200)
            return "fix"
        }),
        ("self-delete", "user.deleted", { client in
            let signedIn = try await client.signedUp("del@example.com", "correct horse battery")
            let status = try await client.delete("/v1/auth/me", as: .token(signedIn.token)).status
            #expect(status == 204)
            return signedIn.uid
        }),
        ("admin delete", "user.deleted", { client in
            let status = try await client.delete("/v1/admin/users/bob").status
            #expect(status == 204)
            return "bob"
        }),
    ]

    @Test func everyAccountMadeOrDeletedArrivesOnceSignedWithTheAccount() async throws {
        try await Self.with { receiver, _, client in
            var expected: [(type: String, uid: String)] = []
            for change in Self.accountChanges {
                let uid = try await change.act(client)
                // A self-delete makes its account first.
                if change.name == "self-delete" { expected.append(("user.created", uid)) }
                expected.append((change.type, uid))
            }
            // A refused sign-up (the email is taken) records nothing.
            #expect(try await client.signUp("ann@example.com", "correct horse battery").status == 409)
            let requests = try await receiver.waitForRequests(expected.count)
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            #expect(receiver.received().count == expected.count)
            #expect(requests.allSatisfy { $0.verified }, "\(requests.compactMap(\.error))")
            let seen = requests.map { ($0.json["type"]?.stringValue ?? "", $0.json["user"]?["uid"]?.stringValue ?? "") }
            // One account's events arrive in order; different accounts' in any order.
            #expect(seen.sorted { "\($0)" < "\($1)" }.map { "\($0.0) \($0.1)" } == expected.sorted { "\($0)" < "\($1)" }.map { "\($0.type) \($0.uid)" })
            let ann = try #require(requests.first { $0.json["user"]?["email"]?.stringValue == "ann@example.com" }?.json)
            #expect(ann["name"]?.stringValue == "userCreated" && ann["params"] == nil && ann["auth"] == nil)
            #expect(ann["user"]?["displayName"]?.stringValue == "Ann" && ann["user"]?["emailVerified"] == .bool(false))
            #expect(ann["user"]?["disabled"] == .bool(false) && ann["user"]?["claims"] == .object([]))
            #expect(!requests.contains { $0.body.contains("argon2") || $0.body.contains("passwordHash") })
            let bob = try #require(requests.first { $0.json["type"]?.stringValue == "user.deleted" && $0.json["user"]?["uid"]?.stringValue == "bob" }?.json)
            #expect(bob["user"]?["claims"] == .object([("role", .string("editor"))]))
        }
    }

    @Test func filesWrittenReplacedAndDeletedArriveWithTheirMetadataAndParams() async throws {
        try await Self.with { receiver, _, client in
            let put = try await client.request(.put, "/v1/files/photos/ann/cat.png", body: [1, 2, 3], contentType: "image/png")
            #expect(put.status == 201, "\(put.text)")
            #expect(try await client.patch("/v1/files/photos/ann/cat.png", #"{"metadata": {"k": "v"}}"#).status == 200)
            #expect(try await client.request(.put, "/v1/files/photos/ann/cat.png", body: [4, 5], contentType: "image/png").status == 200)
            #expect(try await client.delete("/v1/files/photos/ann/cat.png").status == 204)
            #expect(try await client.request(.put, "/v1/files/other/x.txt", body: [1], contentType: "text/plain").status == 201)
            let requests = try await receiver.waitForRequests(4)
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            #expect(receiver.received().count == 4)
            #expect(requests.allSatisfy { $0.verified }, "\(requests.compactMap(\.error))")
            let bodies = requests.map(\.json)
            #expect(bodies.map { $0["type"]?.stringValue } == ["file.finalized", "file.deleted", "file.finalized", "file.deleted"])
            #expect(bodies.allSatisfy { $0["params"] == .object([("uid", .string("ann")), ("name", .string("cat.png"))]) })
            #expect(bodies.map { $0["file"]?["size"] } == [.int(3), .int(3), .int(2), .int(2)])
            // The replaced object is the one deleted: its metadata as the PATCH left it.
            #expect(bodies[1]["file"]?["metadata"] == .object([("k", .string("v"))]) && bodies[1]["file"]?["metageneration"] == .int(2))
            #expect(bodies[0]["file"]?["contentType"]?.stringValue == "image/png" && bodies[0]["file"]?["downloadToken"] == nil)
            #expect(bodies[0]["file"]?["sha256"]?.stringValue == "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81")
        }
    }

    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /secrets/{id} {
              allow read: if request.auth != null && request.auth.uid == 'functions' && request.auth.token.role == 'worker';
            }
          }
        }
        """

    /// A handler uses the token its event carries to read what the rules allow only to the endpoint's identity.
    @Test func anEventCarriesATokenForTheEndpointsIdentityThatRulesAccept() async throws {
        let rules = TestFolders.make() + "/app.rules"
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        try await Self.with(identity: #"{"uid": "functions", "claims": {"role": "worker"}}"#, configure: { $0.rulesFile = rules }) { receiver, _, client in
            try receiver.answer([], then: .init(status: 503))
            #expect(try await client.put("/v1/docs/secrets/s1", #"{"code": 42}"#).status == 200)
            #expect(try await client.put("/v1/docs/posts/p1", "{}").status == 200)
            let first = try await receiver.waitForRequests(1)
            // The stored event holds no token: the admin endpoint shows it without one.
            let pending = try await client.functionEvents("pending") { $0.count == 1 }
            #expect(pending[0]["event"]?["auth"] == nil && pending[0]["event"]?["name"]?.stringValue == "postCreated")
            try receiver.answer([], then: .init(status: 200))
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            let requests = receiver.received()
            #expect(requests.allSatisfy { $0.verified }, "\(requests.compactMap(\.error))")
            #expect(requests.allSatisfy { $0.id == first[0].id })
            let delivered = try #require(requests.last { $0.status == 200 })
            let auth = try #require(delivered.json["auth"])
            let token = try #require(auth["token"]?.stringValue)
            guard case .int(let expiresIn)? = auth["expiresIn"] else { throw ExpectationFailure("no expiresIn: \(auth)") }
            #expect((150...300).contains(expiresIn))
            #expect(token.hasPrefix("hat_"))
            let read = try await client.get("/v1/docs/secrets/s1", as: .token(token))
            #expect(read.status == 200 && read.json?["data"]?["code"] == .int(42), "\(read.text)")
            #expect(try await client.get("/v1/docs/secrets/s1", as: .nobody).status == 403)
            // It acts for rules only: it manages no account.
            #expect(try await client.get("/v1/auth/me", as: .token(token)).status == 403)
        }
    }

    /// Account events pending when the server is killed are delivered after a restart, with their ids.
    @Test func pendingAccountEventsSurviveSIGKILL() async throws {
        try await WebhookTestReceiver.with(secret: FunctionsDeliveryTests.secret()) { receiver in
            let file = try Self.functionsFile(url: receiver.url, secret: receiver.secret)
            let (refused, delivered) = try await receiver.deliveredAfterKill(
                events: 1, arguments: ["--functions", file, "--functions-retry-delay", "0.05"]) { server async throws in
                #expect(try await server.client().post("/v1/admin/users", #"{"uid": "u1"}"#).status == 201)
            }
            #expect(delivered.map(\.id) == [refused[0].id] && delivered.allSatisfy { $0.verified })
            #expect(delivered.first?.json["user"]?["uid"]?.stringValue == "u1")
        }
    }

    /// With no server running, `hearth users` records the events of the functions file it is told of; a server
    /// started later with that file delivers them.
    @Test func accountsChangedWithNoServerRunningAreDeliveredByTheNextServer() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await WebhookTestReceiver.with(secret: FunctionsDeliveryTests.secret()) { receiver in
            let file = try Self.functionsFile(url: receiver.url, secret: receiver.secret)
            try await TestServer.start(dataDirectory: folder).stop()
            for arguments in [["users", "create", "--data", folder, "--uid", "ann", "--functions", file],
                              ["users", "delete", "--data", folder, "ann", "--functions", file],
                              ["users", "create", "--data", folder, "--uid", "bob"]] {
                let run = try await HearthCLI.run(arguments)
                #expect(run.status == 0, "\(run.output)")
            }
            let server = try await TestServer.start(dataDirectory: folder, configure: FunctionsDeliveryTests.configure(file))
            let requests = try await receiver.waitForRequests(2)
            _ = try await server.client().functionEvents("pending") { $0.isEmpty }
            await server.stop()
            #expect(requests.map { "\($0.json["type"]?.stringValue ?? "") \($0.json["user"]?["uid"]?.stringValue ?? "")" }
                    == ["user.created ann", "user.deleted ann"])
            #expect(receiver.received().count == 2 && requests.allSatisfy { $0.verified })
        }
    }
}
