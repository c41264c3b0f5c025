import HearthAuth
import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// `user.*` and `file.*` triggers: events queued in the commit of the account or object change, with the
/// account or the object's metadata in the body; and the identity tokens that events carry.
@Suite struct AccountAndFileEventsTests {
    static let functions = """
        {"endpoints": {"app": {"url": "http://127.0.0.1:9/hooks", "secret": "whsec_\(Base64.encode(Array(repeating: UInt8(7), count: 32)))"}},
         "triggers": [{"name": "userCreated", "on": "user.created", "endpoint": "app"},
                      {"name": "userDeleted", "on": "user.deleted", "endpoint": "app"},
                      {"name": "photoFinalized", "on": "file.finalized", "path": "photos/{uid}/{name}", "endpoint": "app"},
                      {"name": "photoDeleted", "on": "file.deleted", "path": "photos/{uid}/{name}", "endpoint": "app"}]}
        """

    static let hasher = try! PasswordHasher(configuration: .init(memoryKiB: 64, iterations: 1, parallelism: 1),
                                            pool: HashingPool(configuration: .init(threads: 2, maxQueueLength: 256)))

    /// An engine and an account service over one file, with the triggers above in force.
    static func open() async throws -> (TestDatabase, AuthService) {
        let test = try await TestDatabase.open()
        test.database.functions.install(try FunctionsFile.parse(JSON.parse(functions)))
        var configuration = AuthService.Configuration()
        configuration.allowAnonymous = true
        return (test, AuthService(storage: test.accounts, hasher: hasher, configuration: configuration))
    }

    static func bodies(_ db: Database) async throws -> [JSON] {
        guard case .functionEvents(let events) = try await db.perform(.functions(.events(dead: false, after: 0, limit: 100)), as: .admin) else {
            throw ExpectationFailure("not a list of events")
        }
        return try events.map { try JSON.parse($0.body) }
    }

    // MARK: Accounts

    /// Every way an account is made.
    static let creations: [(String, @Sendable (AuthService) async throws -> String)] = [
        ("sign-up", { try await $0.signUp(email: "a@example.com", password: "correct horse battery", displayName: "Ann").user.uid }),
        ("anonymous sign-in", { try await $0.signInAnonymously().user.uid }),
        ("admin create", { try await $0.createUser(.init(uid: "u1", email: "a@example.com", claims: ["role": .string("editor")])).uid }),
        ("admin create without email", { try await $0.createUser(.init(uid: "u2")).uid }),
    ]

    @Test(arguments: creations.indices)
    func everyWayAnAccountIsMadeQueuesOneEvent(_ k: Int) async throws {
        let (test, auth) = try await Self.open()
        defer { test.close() }
        let uid = try await Self.creations[k].1(auth)
        let bodies = try await Self.bodies(test.database)
        try #require(bodies.count == 1, "\(Self.creations[k].0)")
        let body = bodies[0]
        #expect(body["type"]?.stringValue == "user.created" && body["name"]?.stringValue == "userCreated")
        #expect(body["params"] == nil)
        let stored = try await auth.user(uid: uid)
        #expect(body["user"] == stored.adminJSON)
        #expect(body["time"]?.stringValue == stored.createdAt.rfc3339)
        #expect(body["user"]?["passwordHash"] == nil && !(body.text.contains("argon2")))
    }

    @Test func theFixtureLoaderQueuesAnEventPerNewAccountOnly() async throws {
        let (test, auth) = try await Self.open()
        defer { test.close() }
        let fixture = FixtureFile(users: [.init(uid: "f1", email: "f1@example.com", password: "correct horse battery"),
                                          .init(uid: "f2", email: "f2@example.com", password: "correct horse battery")])
        let loader = FixtureLoader(database: test.database, auth: auth)
        try await loader.load(fixture)
        try await loader.load(fixture)
        let bodies = try await Self.bodies(test.database)
        #expect(bodies.map { $0["user"]?["uid"]?.stringValue } == ["f1", "f2"])
    }

    /// Every way an account is deleted.
    static let deletions: [(String, @Sendable (AuthService, SignInResult) async throws -> Void)] = [
        ("self-delete", { auth, signedIn in try await auth.deleteAccount(sessionID: signedIn.sessionID) }),
        ("admin delete", { auth, signedIn in try await auth.deleteUser(uid: signedIn.user.uid) }),
    ]

    @Test(arguments: deletions.indices)
    func everyWayAnAccountIsDeletedQueuesOneEventWithTheAccountAsItWas(_ k: Int) async throws {
        let (test, auth) = try await Self.open()
        defer { test.close() }
        let signedIn = try await auth.signUp(email: "b@example.com", password: "correct horse battery")
        try await Self.deletions[k].1(auth, signedIn)
        let bodies = try await Self.bodies(test.database)
        #expect(bodies.map { $0["type"]?.stringValue } == ["user.created", "user.deleted"])
        #expect(bodies[1]["user"] == signedIn.user.adminJSON)
    }

    @Test func aRefusedAccountChangeQueuesNothing() async throws {
        let (test, auth) = try await Self.open()
        defer { test.close() }
        _ = try await auth.createUser(.init(uid: "u1", email: "a@example.com"))
        // The uid is taken: refused inside the write job, which rolls back alone.
        await #expect(throws: HearthError.self) { _ = try await auth.createUser(.init(uid: "u1")) }
        await #expect(throws: HearthError.self) { try await auth.deleteUser(uid: "nobody") }
        #expect(try await Self.bodies(test.database).count == 1)
    }

    @Test func withoutUserTriggersAnAccountQueuesNothing() async throws {
        let (test, auth) = try await Self.open()
        defer { test.close() }
        test.database.functions.install(nil)
        _ = try await auth.createUser(.init(uid: "u1"))
        try await auth.deleteUser(uid: "u1")
        #expect(try await Self.bodies(test.database).isEmpty)
    }

    // MARK: Files

    struct FileCase: Sendable, CustomTestStringConvertible {
        let name: String
        /// What is done after `photos/u1/a.png` is put once (its own `file.finalized` is not counted).
        let act: @Sendable (Database) async throws -> Void
        /// The events it queues: type and the generation of the object in the body (`new`: the one written).
        let expected: [String]
        var testDescription: String { name }
    }

    static let fileCases: [FileCase] = [
        FileCase(name: "a new generation replaces the object", act: { db in
            _ = try await db.putFile("photos/u1/a.png", [2, 3], as: .admin, contentType: "image/png")
        }, expected: ["file.deleted old", "file.finalized new"]),
        FileCase(name: "a resumable upload, at its last byte only", act: { db in
            let upload = try await db.startUpload("photos/u1/b.png", length: 2, as: .admin)
            _ = try await db.appendUpload(upload.id, at: 0, ByteChunks([1]), as: .admin)
            _ = try await db.appendUpload(upload.id, at: 1, ByteChunks([2]), as: .admin)
        }, expected: ["file.finalized new"]),
        FileCase(name: "a metadata change", act: { db in
            _ = try await db.updateFile("photos/u1/a.png", FileMetadataChange(metadata: ["k": "v"]), as: .admin)
        }, expected: []),
        FileCase(name: "a delete", act: { db in _ = try await db.deleteFile("photos/u1/a.png", as: .admin) },
                 expected: ["file.deleted old"]),
        FileCase(name: "a delete of nothing", act: { db in _ = try await db.deleteFile("photos/u1/none.png", as: .admin) },
                 expected: []),
        FileCase(name: "an object outside the pattern", act: { db in
            _ = try await db.putFile("photos/u1/deeper/a.png", [1], as: .admin)
            _ = try await db.putFile("other/a.png", [1], as: .admin)
        }, expected: []),
        FileCase(name: "a put refused by its precondition", act: { db in
            _ = try? await db.putFile("photos/u1/a.png", [9], as: .admin, ifNoneMatch: true)
        }, expected: []),
    ]

    @Test(arguments: fileCases)
    func fileEvents(_ c: FileCase) async throws {
        let (test, _) = try await Self.open()
        defer { test.close() }
        let db = test.database
        let first = try await db.putFile("photos/u1/a.png", [1], as: .admin, contentType: "image/png", metadata: ["by": "ann"])
        let created = try await Self.bodies(db)
        try #require(created.count == 1)
        #expect(created[0]["type"]?.stringValue == "file.finalized" && created[0]["name"]?.stringValue == "photoFinalized")
        #expect(created[0]["params"] == .object([("uid", .string("u1")), ("name", .string("a.png"))]))
        let file = try #require(created[0]["file"])
        #expect(file["path"]?.stringValue == "photos/u1/a.png" && file["size"] == .int(1) && file["contentType"]?.stringValue == "image/png")
        #expect(file["sha256"]?.stringValue == first.file.sha256Hex && file["metadata"] == .object([("by", .string("ann"))]))
        #expect(file["downloadToken"] == nil)
        #expect(created[0]["time"]?.stringValue == first.file.updateTime.rfc3339)

        try await c.act(db)
        let bodies = Array(try await Self.bodies(db).dropFirst())
        let seen = bodies.map { body -> String in
            let generation = body["file"]?["generation"]
            return (body["type"]?.stringValue ?? "?") + (generation == .int(first.file.generation) ? " old" : " new")
        }
        #expect(seen == c.expected)
    }

    // MARK: Identity tokens

    @Test func anIdentityTokenNeedsNoAccountCarriesItsClaimsAndEndsWithTheUidsSessions() async throws {
        let (test, auth) = try await Self.open()
        defer { test.close() }
        let issued = try await auth.issueIdentityToken(uid: "functions", claims: ["role": .string("worker")], lifetime: .seconds(300))
        #expect(Tokens.isWellFormed(issued.token, .access))
        let (identity, sessionID) = try auth.authenticate(accessToken: issued.token)
        guard case .user(let uid, let token) = identity else { throw ExpectationFailure("not a user") }
        #expect(uid == "functions" && token["role"] == .string("worker") && token["sub"] == .string("functions"))
        #expect(token["firebase"] == .map(["sign_in_provider": .string("custom"), "identities": .map([:])]))
        #expect(try await auth.currentIdentity(sessionID: sessionID) == identity)
        // It acts for rules only: no account of that uid is managed with it.
        await #expect(throws: HearthError.self) { try await auth.deleteAccount(sessionID: sessionID) }
        // An account of the same uid is another identity; deleting it ends the uid's sessions, this one too.
        _ = try await auth.createUser(.init(uid: "functions"))
        #expect(throws: Never.self) { _ = try auth.authenticate(accessToken: issued.token) }
        try await auth.deleteUser(uid: "functions")
        #expect(throws: HearthError.self) { _ = try auth.authenticate(accessToken: issued.token) }
        await #expect(throws: HearthError.self) {
            _ = try await auth.issueIdentityToken(uid: "x", claims: ["sub": .string("y")], lifetime: .seconds(60))
        }
    }

    @Test func anExpiredIdentityTokenIsRefused() async throws {
        let (test, _) = try await Self.open()
        defer { test.close() }
        let clock = ManualClock()
        let auth = AuthService(storage: test.accounts, hasher: Self.hasher, now: clock.function)
        let issued = try await auth.issueIdentityToken(uid: "functions", claims: [:], lifetime: .seconds(300))
        #expect(throws: Never.self) { _ = try auth.authenticate(accessToken: issued.token) }
        clock.advance(seconds: 301)
        #expect(throws: HearthError.self) { _ = try auth.authenticate(accessToken: issued.token) }
    }
}
