import HearthCore
import HearthServer
import HearthTesting
import Testing

/// Bad input to the account endpoints: the documented status and code, a message naming what was wrong,
/// and no change to the stored accounts.
@Suite struct AccountBadInputTests {
    static let password = "correct horse battery"

    /// Seeds one account, sends the bad request, and checks the error and that accounts are unchanged.
    func expectRejected(_ status: Int, _ code: String, mentioning word: String? = nil,
                        _ send: (HearthClient, SignedIn) async throws -> HTTPResult,
                        sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { _, client in
            let session = try await client.signedUp("ann@example.com", Self.password)
            let before = try await client.get("/v1/admin/users")
            let r = try await send(client, session)
            #expect(r.status == status, "got \(r.status): \(r.text.prefix(300))", sourceLocation: sourceLocation)
            #expect(r.errorCode == code, "\(r.text.prefix(300))", sourceLocation: sourceLocation)
            #expect((r.errorMessage ?? "").count > 5, sourceLocation: sourceLocation)
            if let word {
                #expect(r.errorMessage?.contains(word) == true, "\(r.errorMessage ?? "")", sourceLocation: sourceLocation)
            }
            let after = try await client.get("/v1/admin/users")
            #expect(before.json == after.json, "accounts changed", sourceLocation: sourceLocation)
            #expect(try await client.get("/v1/auth/me", as: .token(session.token)).status == 200,
                    "the seeded session still works", sourceLocation: sourceLocation)
        }
    }

    @Test func missingAndWrongTypedFields() async throws {
        try await expectRejected(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": "bob@example.com"}"#, as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.post("/v1/auth/signup", #"{"password": "long enough password"}"#, as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": 42, "password": "long enough password"}"#, as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "displayName") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": "bob@example.com", "password": "long enough", "displayName": []}"#,
                             as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "passwd") { c, _ in
            try await c.post("/v1/auth/signup", #"{"email": "bob@example.com", "passwd": "long enough"}"#, as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.post("/v1/auth/login", #"{"email": "ann@example.com", "password": true}"#, as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "refreshToken") { c, _ in
            try await c.post("/v1/auth/refresh", "{}", as: .nobody)
        }
        try await expectRejected(400, "invalid-argument") { c, _ in
            try await c.post("/v1/auth/signup", #"["ann@example.com"]"#, as: .nobody)
        }
        try await expectRejected(400, "invalid-argument") { c, _ in
            try await c.post("/v1/auth/login", #"{"email": "ann@example.com", "password": "x""#, as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "newPassword") { c, s in
            try await c.post("/v1/auth/password", #"{"currentPassword": "correct horse battery"}"#, as: .token(s.token))
        }
        try await expectRejected(400, "invalid-argument", mentioning: "unknown field") { c, s in
            try await c.post("/v1/auth/logout", #"{"everywhere": true}"#, as: .token(s.token))
        }
        try await expectRejected(415, "unsupported-media-type") { c, _ in
            try await c.request(.post, "/v1/auth/login", body: Array("email=a".utf8), contentType: "text/plain", as: .nobody)
        }
    }

    @Test func emptyAndOversizedPasswords() async throws {
        try await expectRejected(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.signUp("bob@example.com", "")
        }
        try await expectRejected(400, "invalid-argument", mentioning: "at least 8") { c, _ in
            try await c.signUp("bob@example.com", "short")
        }
        try await expectRejected(400, "invalid-argument", mentioning: "at most 128") { c, _ in
            try await c.signUp("bob@example.com", String(repeating: "p", count: 129))
        }
        try await expectRejected(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.logIn("ann@example.com", "")
        }
        try await expectRejected(400, "invalid-argument", mentioning: "password") { c, _ in
            try await c.logIn("ann@example.com", String(repeating: "p", count: 5_000))
        }
        try await expectRejected(400, "invalid-argument", mentioning: "newPassword") { c, s in
            try await c.post("/v1/auth/password", HearthClient.body([("currentPassword", Self.password), ("newPassword", "")]),
                             as: .token(s.token))
        }
    }

    @Test func emptyMalformedAndOversizedEmails() async throws {
        try await expectRejected(400, "invalid-argument", mentioning: "email") { c, _ in try await c.signUp("", Self.password) }
        try await expectRejected(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.signUp("not-an-address", Self.password)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.signUp(String(repeating: "a", count: 250) + "@example.com", Self.password)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.logIn(String(repeating: "a", count: 300) + "@example.com", Self.password)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "email") { c, _ in
            try await c.post("/v1/auth/password-reset", HearthClient.body([("email", "")]), as: .nobody)
        }
    }

    @Test func malformedExpiredAndRevokedTokens() async throws {
        try await expectRejected(401, "unauthenticated", mentioning: "malformed") { c, _ in try await c.refresh("hrt_short") }
        try await expectRejected(401, "unauthenticated") { c, s in try await c.refresh(s.token) }
        try await expectRejected(401, "unauthenticated") { c, _ in
            try await c.refresh("hrt_" + String(repeating: "A", count: 43))
        }
        try await expectRejected(400, "invalid-argument", mentioning: "token") { c, _ in
            try await c.post("/v1/auth/password-reset/confirm",
                             HearthClient.body([("token", "hrs_nope"), ("newPassword", "long enough password")]), as: .nobody)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "token") { c, _ in
            try await c.post("/v1/auth/verify-email/confirm", HearthClient.body([("token", "")]), as: .nobody)
        }
        try await expectRejected(401, "unauthenticated") { c, _ in
            try await c.get("/v1/auth/me", as: .token("hat_" + String(repeating: "x", count: 43)))
        }
        try await expectRejected(401, "unauthenticated", mentioning: "malformed") { c, _ in
            try await c.get("/v1/auth/me", as: .token("hat_%%%"))
        }
        // Revoked: a second session logged out, then used.
        try await expectRejected(401, "unauthenticated", mentioning: "revoked") { c, _ in
            let other = try await c.loggedIn("ann@example.com", Self.password)
            _ = try await c.post("/v1/auth/logout", as: .token(other.token))
            return try await c.get("/v1/auth/me", as: .token(other.token))
        }
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

    @Test func garbageAuthorizationHeaders() async throws {
        for header in ["Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Bearer", "Bearer ", "bearer nonsense", "hat_abc",
                       "Bearer hat_" + String(repeating: "A", count: 43) + " extra"] {
            try await expectRejected(401, "unauthenticated") { c, _ in
                try await c.get("/v1/auth/me", as: .authorization(header))
            }
        }
        // A user's session is not the admin key.
        try await expectRejected(403, "permission-denied") { c, s in try await c.get("/v1/admin/users", as: .token(s.token)) }
        try await expectRejected(403, "permission-denied") { c, _ in try await c.get("/v1/admin/users", as: .nobody) }
        try await expectRejected(401, "unauthenticated") { c, _ in try await c.get("/v1/auth/me", as: .nobody) }
        try await expectRejected(403, "permission-denied", mentioning: "admin key") { c, _ in
            try await c.get("/v1/auth/me", as: .admin)
        }
    }

    @Test func badAdminRequests() async throws {
        try await expectRejected(404, "not-found") { c, _ in try await c.get("/v1/admin/users/nobody") }
        try await expectRejected(404, "not-found") { c, _ in try await c.delete("/v1/admin/users/nobody") }
        try await expectRejected(400, "invalid-argument", mentioning: "reserved") { c, s in
            try await c.put("/v1/admin/users/\(s.uid)/claims", #"{"claims": {"email": "x"}}"#)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "claims") { c, s in
            try await c.put("/v1/admin/users/\(s.uid)/claims", #"{"claims": 3}"#)
        }
        try await expectRejected(409, "already-exists") { c, _ in
            try await c.post("/v1/admin/users", #"{"email": "ANN@example.com", "password": "long enough password"}"#)
        }
        try await expectRejected(400, "invalid-argument", mentioning: "pageSize") { c, _ in
            try await c.get("/v1/admin/users?pageSize=0")
        }
        try await expectRejected(400, "invalid-argument", mentioning: "pageToken") { c, _ in
            try await c.get("/v1/admin/users?pageToken=%25%25")
        }
        try await expectRejected(400, "invalid-argument", mentioning: "uid") { c, _ in
            try await c.post("/v1/admin/users", #"{"uid": "a/b"}"#)
        }
    }
}
