import HearthCore
import HearthServer
import HearthTesting
import Testing
import HTTPTypes

/// Bad input to the account endpoints: the documented status and code, a message naming what was wrong,
/// and no change to the stored accounts. One server holds one account (ann, signed in); every row of the
/// table is sent to it and must get its error, leave the accounts as they were and the seeded session
/// working.
@Suite struct AccountBadInputTests {
    static let password = "correct horse battery"

    /// One bad request, sent with the seeded session at hand, and the error it must get.
    struct Row: Sendable {
        let status: Int
        let code: String
        let word: String?
        let send: @Sendable (HearthClient, SignedIn) async throws -> HTTPResult
        let sourceLocation: SourceLocation

        init(_ status: Int, _ code: String, mentioning word: String? = nil,
             sourceLocation: SourceLocation = #_sourceLocation,
             _ send: @escaping @Sendable (HearthClient, SignedIn) async throws -> HTTPResult) {
            self.status = status
            self.code = code
            self.word = word
            self.send = send
            self.sourceLocation = sourceLocation
        }
    }

    static let missingAndWrongTypedFields: [Row] = [
        Row(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": "bob@example.com"}"#, as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.post("/v1/auth/signup", #"{"password": "long enough password"}"#, as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": 42, "password": "long enough password"}"#, as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "displayName") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": "bob@example.com", "password": "long enough", "displayName": []}"#,
                             as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "passwd") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": "bob@example.com", "passwd": "long enough"}"#, as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.post("/v1/auth/login", #"{"email": "ann@example.com", "password": true}"#, as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "refreshToken") { c, _ in
            try await c.post("/v1/auth/refresh", "{}", as: .nobody)
        },
        Row(400, "invalid-argument") { c, _ in
            try await c.post("/v1/auth/signup", #"["ann@example.com"]"#, as: .nobody)
        },
        Row(400, "invalid-argument") { c, _ in
            try await c.post("/v1/auth/login", #"{"email": "ann@example.com", "password": "x""#, as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "newPassword") { c, s in
            try await c.post("/v1/auth/password", #"{"currentPassword": "correct horse battery"}"#, as: .token(s.token))
        },
        Row(400, "invalid-argument", mentioning: "unknown field") { c, s in
            try await c.post("/v1/auth/logout", #"{"everywhere": true}"#, as: .token(s.token))
        },
        Row(415, "unsupported-media-type") { c, _ in
            try await c.request(.post, "/v1/auth/login", body: Array("email=a".utf8), contentType: "text/plain", as: .nobody)
        },
    ]

    static let emptyAndOversizedPasswords: [Row] = [
        Row(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.signUp("bob@example.com", "")
        },
        Row(400, "invalid-argument", mentioning: "at least 8") { c, _ in
            try await c.signUp("bob@example.com", "short")
        },
        Row(400, "invalid-argument", mentioning: "at most 128") { c, _ in
            try await c.signUp("bob@example.com", String(repeating: "p", count: 129))
        },
        Row(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.logIn("ann@example.com", "")
        },
        Row(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.logIn("ann@example.com", String(repeating: "p", count: 5_000))
        },
        Row(400, "invalid-argument", mentioning: "newPassword") { c, s in
            try await c.post("/v1/auth/password", HearthClient.body([("currentPassword", Self.password), ("newPassword", "")]),
                             as: .token(s.token))
        },
    ]

    static let emptyMalformedAndOversizedEmails: [Row] = [
        Row(400, "invalid-argument", mentioning: "email") { c, _ in try await c.signUp("", Self.password) },
        Row(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.signUp("not-an-address", Self.password)
        },
        Row(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.signUp(String(repeating: "a", count: 250) + "@example.com", Self.password)
        },
        Row(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.logIn(String(repeating: "a", count: 300) + "@example.com", Self.password)
        },
        Row(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.post("/v1/auth/password-reset", HearthClient.body([("email", "")]), as: .nobody)
        },
    ]

    static let malformedExpiredAndRevokedTokens: [Row] = [
        Row(401, "unauthenticated", mentioning: "malformed") { c, _ in try await c.refresh("hrt_short") },
        Row(401, "unauthenticated") { c, s in try await c.refresh(s.token) },
        Row(401, "unauthenticated") { c, _ in
            try await c.refresh("hrt_" + String(repeating: "A", count: 43))
        },
        Row(400, "invalid-argument", mentioning: "token") { c, _ in
            try await c.post("/v1/auth/password-reset/confirm",
                             HearthClient.body([("token", "hrs_nope"), ("newPassword", "long enough password")]), as: .nobody)
        },
        Row(400, "invalid-argument", mentioning: "token") { c, _ in
            try await c.post("/v1/auth/verify-email/confirm", HearthClient.body([("token", "")]), as: .nobody)
        },
        Row(401, "unauthenticated") { c, _ in
            try await c.get("/v1/auth/me", as: .token("hat_" + String(repeating: "x", count: 43)))
        },
        Row(401, "unauthenticated", mentioning: "malformed") { c, _ in
            try await c.get("/v1/auth/me", as: .token("hat_%%%"))
        },
        // Revoked: a second session logged out, then used.
        Row(401, "unauthenticated", mentioning: "revoked") { c, _ in
            let other = try await c.loggedIn("ann@example.com", Self.password)
            _ = try await c.post("/v1/auth/logout", as: .token(other.token))
            return try await c.get("/v1/auth/me", as: .token(other.token))
        },
    ]

    static let garbageHeaders = ["Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Bearer", "Bearer ", "bearer nonsense", "hat_abc",
                                 "Bearer hat_" + String(repeating: "A", count: 43) + " extra"]

    static let garbageAuthorizationHeaders: [Row] = garbageHeaders.map { header in
        Row(401, "unauthenticated") { c, _ in try await c.get("/v1/auth/me", as: .authorization(header)) }
    } + [
        // A user's session is not the admin key.
        Row(403, "permission-denied") { c, s in try await c.get("/v1/admin/users", as: .token(s.token)) },
        Row(403, "permission-denied") { c, _ in try await c.get("/v1/admin/users", as: .nobody) },
        Row(401, "unauthenticated") { c, _ in try await c.get("/v1/auth/me", as: .nobody) },
        Row(403, "permission-denied", mentioning: "admin key") { c, _ in
            try await c.get("/v1/auth/me", as: .admin)
        },
    ]

    static let badAdminRequests: [Row] = [
        Row(404, "not-found") { c, _ in try await c.get("/v1/admin/users/nobody") },
        Row(404, "not-found") { c, _ in try await c.delete("/v1/admin/users/nobody") },
        Row(400, "invalid-argument", mentioning: "reserved") { c, s in
            try await c.put("/v1/admin/users/\(s.uid)/claims", #"{"claims": {"email": "x"}}"#)
        },
        Row(400, "invalid-argument", mentioning: "claims") { c, s in
            try await c.put("/v1/admin/users/\(s.uid)/claims", #"{"claims": 3}"#)
        },
        Row(409, "already-exists") { c, _ in
            try await c.post("/v1/admin/users", #"{"email": "ANN@example.com", "password": "long enough password"}"#)
        },
        Row(400, "invalid-argument", mentioning: "pageSize") { c, _ in
            try await c.get("/v1/admin/users?pageSize=0")
        },
        Row(400, "invalid-argument", mentioning: "pageToken") { c, _ in
            try await c.get("/v1/admin/users?pageToken=%25%25")
        },
        Row(400, "invalid-argument", mentioning: "uid") { c, _ in
            try await c.post("/v1/admin/users", #"{"uid": "a/b"}"#)
        },
    ]

    static let rows = missingAndWrongTypedFields + emptyAndOversizedPasswords + emptyMalformedAndOversizedEmails
        + malformedExpiredAndRevokedTokens + garbageAuthorizationHeaders + badAdminRequests

    /// A server with one account, signed in.
    static func seeded() async throws -> (TestServer, SignedIn) {
        let server = try await TestServer.start(configure: { $0.useTestAccounts() })
        let client = server.client()
        do {
            let session = try await client.signedUp("ann@example.com", Self.password)
            await client.close()
            return (server, session)
        } catch {
            await client.close()
            await server.stop()
            throw error
        }
    }

    /// Sends a row and checks its error; answers whether the accounts are unchanged and the seeded session
    /// still works.
    static func isRejected(_ row: Row, by server: TestServer, session: SignedIn) async throws -> Bool {
        let client = server.client()
        do {
            let unchanged = try await isRejected(row, client: client, session: session)
            await client.close()
            return unchanged
        } catch {
            await client.close()
            throw error
        }
    }

    static func isRejected(_ row: Row, client: HearthClient, session: SignedIn) async throws -> Bool {
        let at = row.sourceLocation
        let before = try await client.get("/v1/admin/users")
        let r = try await row.send(client, session)
        #expect(r.status == row.status, "got \(r.status): \(r.text.prefix(300))", sourceLocation: at)
        #expect(r.errorCode == row.code, "\(r.text.prefix(300))", sourceLocation: at)
        #expect((r.errorMessage ?? "").count > 5, sourceLocation: at)
        if let word = row.word {
            #expect(r.errorMessage?.contains(word) == true, "\(r.errorMessage ?? "")", sourceLocation: at)
        }
        let after = try await client.get("/v1/admin/users")
        let works = try await client.get("/v1/auth/me", as: .token(session.token)).status == 200
        #expect(before.json == after.json, "accounts changed", sourceLocation: at)
        #expect(works, "the seeded session still works", sourceLocation: at)
        return before.json == after.json && works
    }

    @Test func everyBadRequestIsRefusedAndChangesNothing() async throws {
        var (server, session) = try await Self.seeded()
        for row in Self.rows {
            // A row that changed the accounts has failed; the rows after it start again from the seed.
            if try await !Self.isRejected(row, by: server, session: session) {
                await server.stop()
                (server, session) = try await Self.seeded()
            }
        }
        await server.stop()
    }

    @Test func expiredTokens() async throws {
        let clock = ManualClock()
        try await TestServer.with(configure: { $0.useTestAccounts(clock: clock) }) { _, client in
            let s = try await client.signedUp("ann@example.com", Self.password)
            clock.advance(seconds: 3_601)
            let r = try await client.get("/v1/docs/col/doc", as: .token(s.token))
            #expect(r.status == 401 && r.errorCode == "unauthenticated" && r.errorMessage?.contains("expired") == true)
        }
    }
}
