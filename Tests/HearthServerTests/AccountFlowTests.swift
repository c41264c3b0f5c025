import HearthCore
import HearthServer
import HearthTesting
import Testing
import HearthAuth

/// The account flows (docs/api.md, Accounts) over real HTTP: sign-up, login, refresh rotation and reuse,
/// logout, expiry, password change and reset, email verification, anonymous accounts and account deletion.
@Suite struct AccountFlowTests {
    static let password = "correct horse battery"

    /// A server with cheap hashing and a clock the test moves.
    func withServer(_ body: (TestServer, HearthClient, ManualClock) async throws -> Void) async throws {
        let clock = ManualClock()
        try await TestServer.with(configure: { $0.useTestAccounts(clock: clock) }) { server, client in
            try await body(server, client, clock)
        }
    }

    @Test func signUpLogInAndMe() async throws {
        try await withServer { _, client, _ in
            let signUp = try await client.signUp("Ann@Example.com", Self.password, displayName: "Ann")
            #expect(signUp.status == 200, "\(signUp.text)")
            let json = try #require(signUp.json)
            #expect(Set(Self.keys(json)) == ["user", "token", "refreshToken", "expiresIn"])
            let user = try #require(json["user"])
            #expect(Set(Self.keys(user)) == ["uid", "email", "emailVerified", "displayName", "anonymous", "createdAt"])
            #expect(user["email"] == .string("Ann@Example.com"))
            #expect(user["emailVerified"] == .bool(false))
            #expect(user["displayName"] == .string("Ann"))
            #expect(user["anonymous"] == .bool(false))
            #expect(json["expiresIn"] == .int(3_600))
            let session = try #require(SignedIn(signUp))
            #expect(session.token.hasPrefix("hat_") && session.token.count >= 47)
            #expect(session.refreshToken.hasPrefix("hrt_") && session.refreshToken.count >= 47)

            let me = try await client.get("/v1/auth/me", as: .token(session.token))
            #expect(me.status == 200)
            #expect(me.json == user)

            // Emails are unique case-insensitively; login accepts any case.
            let again = try await client.signUp("ann@EXAMPLE.com", "another password")
            #expect(again.status == 409 && again.errorCode == "already-exists")
            let login = try await client.loggedIn("ANN@example.com", Self.password)
            #expect(login.uid == session.uid)
            #expect(login.token != session.token)
        }
    }

    @Test func wrongPasswordAndUnknownEmailLookTheSame() async throws {
        try await withServer { _, client, _ in
            _ = try await client.signedUp("ann@example.com", Self.password)
            let wrong = try await client.logIn("ann@example.com", "not the password")
            let unknown = try await client.logIn("nobody@example.com", "not the password")
            #expect(wrong.status == 401 && wrong.errorCode == "unauthenticated")
            #expect(wrong.status == unknown.status && wrong.text == unknown.text)
        }
    }

    @Test func failedLoginsBackOffWithRetryAfter() async throws {
        try await withServer { _, client, clock in
            _ = try await client.signedUp("ann@example.com", Self.password)
            for _ in 0..<6 { _ = try await client.logIn("ann@example.com", "wrong password") }
            let blocked = try await client.logIn("ann@example.com", Self.password)
            #expect(blocked.status == 429 && blocked.errorCode == "resource-exhausted", "\(blocked.text)")
            #expect(Int(blocked.header("Retry-After") ?? "") ?? 0 >= 1)
            // An unknown email is throttled the same way, so the throttle reveals nothing either.
            for _ in 0..<6 { _ = try await client.logIn("nobody@example.com", "wrong password") }
            #expect(try await client.logIn("nobody@example.com", "wrong password").status == 429)
            clock.advance(seconds: 2)
            #expect(try await client.logIn("ann@example.com", Self.password).status == 200)
        }
    }

    @Test func refreshRotatesAndReuseRevokesTheSession() async throws {
        try await withServer { _, client, _ in
            let first = try await client.signedUp("ann@example.com", Self.password)
            let rotated = try await client.refresh(first.refreshToken)
            let second = try #require(SignedIn(rotated), "\(rotated.text)")
            #expect(second.uid == first.uid)
            #expect(second.token != first.token && second.refreshToken != first.refreshToken)
            #expect(try await client.get("/v1/auth/me", as: .token(first.token)).status == 401, "the old access token is replaced")
            #expect(try await client.get("/v1/auth/me", as: .token(second.token)).status == 200)

            // Replaying the spent refresh token revokes the whole session, the thief's and the owner's copy.
            let replay = try await client.refresh(first.refreshToken)
            #expect(replay.status == 401 && replay.errorCode == "unauthenticated")
            #expect(replay.errorMessage?.contains("revoked") == true)
            #expect(try await client.get("/v1/auth/me", as: .token(second.token)).status == 401)
            #expect(try await client.refresh(second.refreshToken).status == 401)
            // Other sessions of the account are untouched.
            #expect(try await client.logIn("ann@example.com", Self.password).status == 200)
        }
    }

    @Test func logoutEndsTheSessionAtOnce() async throws {
        try await withServer { _, client, _ in
            let a = try await client.signedUp("ann@example.com", Self.password)
            let b = try await client.loggedIn("ann@example.com", Self.password)
            let out = try await client.post("/v1/auth/logout", as: .token(a.token))
            #expect(out.status == 204)
            let after = try await client.get("/v1/auth/me", as: .token(a.token))
            #expect(after.status == 401 && after.errorCode == "unauthenticated")
            #expect(after.header("WWW-Authenticate") == "Bearer")
            #expect(try await client.refresh(a.refreshToken).status == 401)
            #expect(try await client.get("/v1/docs/col/doc", as: .token(a.token)).status == 401)
            #expect(try await client.get("/v1/auth/me", as: .token(b.token)).status == 200, "other sessions stay")
        }
    }

    @Test func tokensExpire() async throws {
        try await withServer { _, client, clock in
            let s = try await client.signedUp("ann@example.com", Self.password)
            clock.advance(seconds: 3_599)
            #expect(try await client.get("/v1/auth/me", as: .token(s.token)).status == 200)
            clock.advance(seconds: 2)
            let expired = try await client.get("/v1/auth/me", as: .token(s.token))
            #expect(expired.status == 401 && expired.errorMessage?.contains("expired") == true, "\(expired.text)")
            // Refresh works even when the client still sends its expired access token along.
            let refreshed = try await client.post("/v1/auth/refresh", HearthClient.body([("refreshToken", s.refreshToken)]),
                                                  as: .token(s.token))
            let fresh = try #require(SignedIn(refreshed), "\(refreshed.text)")
            #expect(try await client.get("/v1/auth/me", as: .token(fresh.token)).status == 200)
            clock.advance(seconds: 30 * 86_400 + 1)
            let late = try await client.refresh(fresh.refreshToken)
            #expect(late.status == 401 && late.errorMessage?.contains("expired") == true, "\(late.text)")
        }
    }

    @Test func passwordChangeRevokesTheOtherSessions() async throws {
        try await withServer { _, client, _ in
            let a = try await client.signedUp("ann@example.com", Self.password)
            let b = try await client.loggedIn("ann@example.com", Self.password)
            let wrong = try await client.post("/v1/auth/password", HearthClient.body([
                ("currentPassword", "not it at all"), ("newPassword", "a brand new password")]), as: .token(a.token))
            #expect(wrong.status == 403 && wrong.errorCode == "permission-denied")
            let changed = try await client.post("/v1/auth/password", HearthClient.body([
                ("currentPassword", Self.password), ("newPassword", "a brand new password")]), as: .token(a.token))
            #expect(changed.status == 200 && changed.json?["uid"] == .string(a.uid), "\(changed.text)")
            #expect(try await client.get("/v1/auth/me", as: .token(a.token)).status == 200, "this session stays")
            #expect(try await client.get("/v1/auth/me", as: .token(b.token)).status == 401, "others end")
            #expect(try await client.refresh(b.refreshToken).status == 401)
            #expect(try await client.logIn("ann@example.com", Self.password).status == 401)
            #expect(try await client.logIn("ann@example.com", "a brand new password").status == 200)
        }
    }

    @Test func passwordResetIsSingleUseAndExpires() async throws {
        try await withServer { server, client, clock in
            let s = try await client.signedUp("ann@example.com", Self.password)
            let known = try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "Ann@example.com")]))
            let unknown = try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "who@example.com")]))
            #expect(known.status == 202 && unknown.status == 202)
            #expect(known.body == unknown.body, "the answer never reveals whether an address has an account")

            let token = try await server.waitForOutboxToken(to: "ann@example.com", purpose: "password-reset")
            #expect(token.hasPrefix("hrs_"))
            #expect(server.outboxMessages().allSatisfy { $0["to"] != .string("who@example.com") })
            let confirm = { (token: String, password: String) in
                try await client.post("/v1/auth/password-reset/confirm",
                                      HearthClient.body([("token", token), ("newPassword", password)]), as: .nobody)
            }
            let weak = try await confirm(token, "short")
            #expect(weak.status == 400, "a weak password does not spend the token")
            let done = try await confirm(token, "a reset password")
            #expect(done.status == 200 && done.json?["uid"] == .string(s.uid), "\(done.text)")
            #expect(try await client.get("/v1/auth/me", as: .token(s.token)).status == 401, "a reset ends every session")
            let reused = try await confirm(token, "yet another password")
            #expect(reused.status == 400 && reused.errorCode == "invalid-argument")
            #expect(try await client.logIn("ann@example.com", "a reset password").status == 200)

            // A link stops working after an hour.
            _ = try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")]))
            let second = try await server.waitForOutboxToken(to: "ann@example.com", purpose: "password-reset", after: 1)
            clock.advance(seconds: 3_601)
            let late = try await confirm(second, "a late password")
            #expect(late.status == 400 && late.errorMessage?.contains("expired") == true, "\(late.text)")
            #expect(try await client.logIn("ann@example.com", "a reset password").status == 200)
        }
    }

    @Test func emailVerification() async throws {
        try await withServer { server, client, _ in
            let s = try await client.signedUp("ann@example.com", Self.password)
            #expect(try await client.post("/v1/auth/verify-email", as: .nobody).status == 401)
            let request = try await client.post("/v1/auth/verify-email", as: .token(s.token))
            #expect(request.status == 202, "\(request.text)")
            let token = try await server.waitForOutboxToken(to: "ann@example.com", purpose: "email-verification")
            #expect(token.hasPrefix("hev_"))
            let confirmed = try await client.post("/v1/auth/verify-email/confirm",
                                                  HearthClient.body([("token", token)]), as: .nobody)
            #expect(confirmed.status == 200 && confirmed.json?["emailVerified"] == .bool(true), "\(confirmed.text)")
            #expect(try await client.get("/v1/auth/me", as: .token(s.token)).json?["emailVerified"] == .bool(true))
            let again = try await client.post("/v1/auth/verify-email/confirm",
                                              HearthClient.body([("token", token)]), as: .nobody)
            #expect(again.status == 400)
        }
    }

    /// Verification messages: a few may be asked for back to back, then asking again too soon is 429 (with
    /// Retry-After), and nothing more is queued meanwhile.
    @Test func verificationMessagesAreThrottled() async throws {
        try await withServer { server, client, _ in
            let s = try await client.signedUp("vic@example.com", Self.password)
            var statuses: [Int] = []
            for _ in 0..<5 { statuses.append(try await client.post("/v1/auth/verify-email", as: .token(s.token)).status) }
            #expect(statuses == [202, 202, 202, 202, 429], "\(statuses)")
            let refused = try await client.post("/v1/auth/verify-email", as: .token(s.token))
            #expect(refused.errorCode == "resource-exhausted" && refused.header("Retry-After") != nil)
            _ = try await server.waitForOutboxToken(to: "vic@example.com", purpose: "email-verification", after: 3)
            try await Task.sleep(for: .milliseconds(200))
            #expect(server.outboxMessages().filter { $0["to"]?.stringValue == "vic@example.com" }.count == 4)
        }
    }

    @Test func anonymousSignInAndAccountDeletion() async throws {
        try await withServer { _, client, _ in
            let anonymous = try await client.post("/v1/auth/anonymous", as: .nobody)
            let s = try #require(SignedIn(anonymous), "\(anonymous.text)")
            #expect(s.user["anonymous"] == .bool(true) && s.user["email"] == .null)
            #expect(try await client.get("/v1/auth/me", as: .token(s.token)).status == 200)
            let noPassword = try await client.post("/v1/auth/password", HearthClient.body([
                ("currentPassword", "anything"), ("newPassword", "a new password")]), as: .token(s.token))
            #expect(noPassword.status == 412 || noPassword.status == 400, "\(noPassword.text)")

            let ann = try await client.signedUp("ann@example.com", Self.password)
            #expect(try await client.delete("/v1/auth/me", as: .token(ann.token)).status == 204)
            #expect(try await client.get("/v1/auth/me", as: .token(ann.token)).status == 401)
            #expect(try await client.logIn("ann@example.com", Self.password).status == 401)
            #expect(try await client.signUp("ann@example.com", Self.password).status == 200, "the address is free again")
        }
    }

    @Test func rulesSeeTheFirebaseIdentity() async throws {
        try await withServer { server, client, _ in
            let s = try await client.signedUp("ann@example.com", Self.password)
            let claims = try await client.put("/v1/admin/users/\(s.uid)/claims", #"{"claims": {"role": "editor"}}"#)
            #expect(claims.status == 200, "\(claims.text)")
            let (identity, _) = try server.services.auth.authenticate(accessToken: s.token)
            guard case .user(let uid, let token) = identity else {
                Issue.record("not a user identity: \(identity)")
                return
            }
            #expect(uid == s.uid)
            #expect(token["email"] == .string("ann@example.com"))
            #expect(token["email_verified"] == .bool(false))
            #expect(token["role"] == .string("editor"), "custom claims apply at once")
            #expect(Self.provider(token) == "password")

            let anonymous = try #require(SignedIn(try await client.post("/v1/auth/anonymous", as: .nobody)))
            let (other, _) = try server.services.auth.authenticate(accessToken: anonymous.token)
            guard case .user(_, let anonymousToken) = other else {
                Issue.record("not a user identity")
                return
            }
            #expect(Self.provider(anonymousToken) == "anonymous")
            #expect(anonymousToken["email"] == nil)
        }
    }

    /// `token.firebase.sign_in_provider`.
    static func provider(_ token: [String: Value]) -> String? {
        guard case .map(let firebase)? = token["firebase"], case .string(let provider)? = firebase["sign_in_provider"] else {
            return nil
        }
        return provider
    }

    static func keys(_ json: JSON) -> [String] {
        guard case .object(let pairs) = json else { return [] }
        return pairs.map(\.0)
    }
}
