import HearthCore
import HearthTesting
import Testing
@testable import HearthAuth

@Suite struct AuthServiceTests {
    @Test func signUpSignsInAndAnswersDesignShapes() async throws {
        let f = Fixture.service()
        let result = try await f.service.signUp(email: " Alice@Example.com ", password: "correct horse", displayName: "Alice")
        #expect(result.token.hasPrefix("hat_") && result.refreshToken.hasPrefix("hrt_"))
        #expect(result.expiresIn == 3_600)
        #expect(result.user.email == "Alice@Example.com")
        #expect(result.user.emailNormalized == "alice@example.com")
        #expect(result.user.passwordHash?.hasPrefix("$argon2id$") == true)
        let json = result.json
        #expect(json["token"] == .string(result.token))
        #expect(json["expiresIn"] == .int(3_600))
        let user = try #require(json["user"])
        #expect(user["uid"] == .string(result.user.uid))
        #expect(user["email"] == .string("Alice@Example.com"))
        #expect(user["emailVerified"] == .bool(false))
        #expect(user["displayName"] == .string("Alice"))
        #expect(user["anonymous"] == .bool(false))
        #expect(user["createdAt"] == .string("2026-11-22T10:00:00.000000Z"))
        #expect(user["passwordHash"] == nil && user["claims"] == nil)
        // Tokens are stored only hashed.
        let session = try #require(await f.storage.session(id: result.sessionID))
        #expect(session.accessTokenHash == Tokens.hash(result.token))
        #expect(session.refreshTokenHash == Tokens.hash(result.refreshToken))
        #expect(!"\(result)".contains(result.token) && !"\(result)".contains(result.refreshToken))
    }

    @Test func emailsAreUniqueCaseInsensitively() async throws {
        let f = Fixture.service()
        _ = try await f.service.signUp(email: "bob@example.com", password: "password1")
        let error = await caught { try await f.service.signUp(email: "BOB@example.COM", password: "password2") }
        #expect(error == .alreadyExists("An account with this email address already exists."))
    }

    @Test func signUpValidatesFields() async {
        let f = Fixture.service()
        #expect(await caught { try await f.service.signUp(email: "nope", password: "password1") }?.message.hasPrefix("email") == true)
        #expect(await caught { try await f.service.signUp(email: "a@b.co", password: "short") }
            == .invalidArgument("password must be at least 8 characters"))
        #expect(await caught { try await f.service.signUp(email: "a@b.co", password: "") }
            == .invalidArgument("password is required"))
        #expect(await caught {
            try await f.service.signUp(email: "a@b.co", password: "password1", displayName: String(repeating: "n", count: 300))
        }?.message.hasPrefix("displayName") == true)
    }

    @Test func logInAuthenticatesAndBuildsTheRulesIdentity() async throws {
        let f = Fixture.service()
        let signUp = try await f.service.signUp(email: "carol@example.com", password: "password1", displayName: "Carol")
        _ = try await f.service.setClaims(uid: signUp.user.uid, claims: ["admin": .bool(true)])
        let login = try await f.service.logIn(email: "CAROL@example.com", password: "password1")
        #expect(login.user.uid == signUp.user.uid)
        let (identity, sessionID) = try f.service.authenticate(accessToken: login.token)
        #expect(sessionID == login.sessionID)
        guard case .user(let uid, let token) = identity else { Issue.record("not a user"); return }
        #expect(uid == signUp.user.uid)
        #expect(token["sub"] == .string(uid) && token["user_id"] == .string(uid))
        #expect(token["email"] == .string("carol@example.com"))
        #expect(token["email_verified"] == .bool(false))
        #expect(token["admin"] == .bool(true))
        #expect(token["name"] == .string("Carol"))
        #expect(token["firebase"] == .map([
            "sign_in_provider": .string("password"),
            "identities": .map(["email": .array([.string("carol@example.com")])]),
        ]))
        #expect(token["exp"] == .int(f.clock.now.epochSeconds + 3_600))
    }

    @Test func unknownEmailAndWrongPasswordGetTheSameAnswer() async throws {
        let f = Fixture.service()
        _ = try await f.service.signUp(email: "dave@example.com", password: "password1")
        let wrong = await caught { try await f.service.logIn(email: "dave@example.com", password: "password2") }
        let unknown = await caught { try await f.service.logIn(email: "nobody@example.com", password: "password2") }
        #expect(wrong != nil && wrong == unknown)
        #expect(wrong?.code == .unauthenticated)
        // The unknown email still paid for one Argon2 verification (against the dummy hash).
        let before = Fixture.pool.statistics.completed
        _ = await caught { try await f.service.logIn(email: "nobody2@example.com", password: "password2") }
        #expect(Fixture.pool.statistics.completed > before)
    }

    @Test func anonymousSignIn() async throws {
        let f = Fixture.service()
        let result = try await f.service.signInAnonymously()
        #expect(result.user.anonymous && result.user.email == nil)
        #expect(result.json["user"]?["email"] == .null)
        let (identity, _) = try f.service.authenticate(accessToken: result.token)
        guard case .user(_, let token) = identity else { Issue.record("not a user"); return }
        #expect(token["firebase"]?.mapValue?["sign_in_provider"] == .string("anonymous"))
        #expect(token["firebase"]?.mapValue?["identities"] == .map([:]))
        #expect(token["email"] == nil)
        let closed = Fixture.service(AuthService.Configuration(allowAnonymous: false))
        #expect(await caught { try await closed.service.signInAnonymously() }?.code == .permissionDenied)
    }

    @Test func accessTokensExpire() async throws {
        let f = Fixture.service()
        let result = try await f.service.signUp(email: "erin@example.com", password: "password1")
        f.clock.advance(seconds: 3_599)
        _ = try f.service.authenticate(accessToken: result.token)
        f.clock.advance(seconds: 1)
        #expect(await caught { try f.service.authenticate(accessToken: result.token) }
            == .unauthenticated("The access token has expired; refresh it."))
        #expect(await caught { try await f.service.me(sessionID: result.sessionID) }?.code == .unauthenticated)
        // The refresh token still works and gives a fresh pair.
        let refreshed = try await f.service.refresh(refreshToken: result.refreshToken)
        _ = try f.service.authenticate(accessToken: refreshed.token)
    }

    @Test func refreshRotatesAndOldAccessTokensStop() async throws {
        let f = Fixture.service()
        let first = try await f.service.signUp(email: "fay@example.com", password: "password1")
        let second = try await f.service.refresh(refreshToken: first.refreshToken)
        #expect(second.sessionID == first.sessionID)
        #expect(second.token != first.token && second.refreshToken != first.refreshToken)
        #expect(await caught { try f.service.authenticate(accessToken: first.token) }?.code == .unauthenticated)
        _ = try f.service.authenticate(accessToken: second.token)
        let third = try await f.service.refresh(refreshToken: second.refreshToken)
        _ = try f.service.authenticate(accessToken: third.token)
    }

    @Test func reusedRefreshTokenRevokesTheSession() async throws {
        let f = Fixture.service()
        let events = f.service.revocations.events()
        let first = try await f.service.signUp(email: "gus@example.com", password: "password1")
        let second = try await f.service.refresh(refreshToken: first.refreshToken)
        let reuse = await caught { try await f.service.refresh(refreshToken: first.refreshToken) }
        #expect(reuse?.code == .unauthenticated)
        #expect(reuse?.message.contains("already used") == true)
        // The whole session is gone: the current access and refresh tokens too.
        #expect(await caught { try f.service.authenticate(accessToken: second.token) }?.code == .unauthenticated)
        #expect(await caught { try await f.service.refresh(refreshToken: second.refreshToken) }?.code == .unauthenticated)
        var iterator = events.makeAsyncIterator()
        let event = await iterator.next()
        #expect(event == RevocationEvent(uid: first.user.uid, sessionIDs: [first.sessionID], reason: .refreshTokenReused))
        #expect(event?.affects(sessionID: first.sessionID, uid: first.user.uid) == true)
        #expect(event?.affects(sessionID: "other", uid: first.user.uid) == false)
    }

    @Test func refreshTokensExpire() async throws {
        let f = Fixture.service()
        let result = try await f.service.signUp(email: "hal@example.com", password: "password1")
        f.clock.advance(seconds: 30 * 86_400)
        #expect(await caught { try await f.service.refresh(refreshToken: result.refreshToken) }
            == .unauthenticated("The refresh token has expired; sign in again."))
    }

    @Test func malformedAndUnknownTokensAreRefused() async {
        let f = Fixture.service()
        for bad in ["", "Bearer x", "hat_short", Tokens.generate(.refresh), String(repeating: "a", count: 10_000)] {
            #expect(await caught { try f.service.authenticate(accessToken: bad) }?.code == .unauthenticated)
        }
        #expect(await caught { try f.service.authenticate(accessToken: Tokens.generate(.access)) }?.code == .unauthenticated)
        #expect(await caught { try await f.service.refresh(refreshToken: "hrt_x") }
            == .unauthenticated("The refresh token is malformed."))
        #expect(await caught { try await f.service.refresh(refreshToken: Tokens.generate(.refresh)) }?.code == .unauthenticated)
        #expect(await caught { try await f.service.me(sessionID: "nope") }?.code == .unauthenticated)
    }

    @Test func logoutInvalidatesAtOnce() async throws {
        let f = Fixture.service()
        let events = f.service.revocations.events()
        let a = try await f.service.signUp(email: "ida@example.com", password: "password1")
        let b = try await f.service.logIn(email: "ida@example.com", password: "password1")
        try await f.service.logOut(sessionID: a.sessionID)
        #expect(await caught { try f.service.authenticate(accessToken: a.token) }
            == .unauthenticated("The session has been revoked; sign in again."))
        #expect(await caught { try await f.service.refresh(refreshToken: a.refreshToken) }?.code == .unauthenticated)
        _ = try f.service.authenticate(accessToken: b.token)
        try await f.service.logOut(sessionID: a.sessionID)  // idempotent
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == RevocationEvent(uid: a.user.uid, sessionIDs: [a.sessionID], reason: .loggedOut))
    }

    @Test func meAndDeleteAccount() async throws {
        let f = Fixture.service()
        let events = f.service.revocations.events()
        let a = try await f.service.signUp(email: "jo@example.com", password: "password1")
        let b = try await f.service.logIn(email: "jo@example.com", password: "password1")
        #expect(try await f.service.me(sessionID: a.sessionID).uid == a.user.uid)
        try await f.service.deleteAccount(sessionID: a.sessionID)
        #expect(await caught { try f.service.authenticate(accessToken: b.token) }?.code == .unauthenticated)
        #expect(await f.storage.user(uid: a.user.uid) == nil)
        // The email is free again.
        _ = try await f.service.signUp(email: "jo@example.com", password: "password2")
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == RevocationEvent(uid: a.user.uid, sessionIDs: nil, reason: .accountDeleted))
    }

    @Test func changePasswordRevokesOtherSessions() async throws {
        let f = Fixture.service()
        let events = f.service.revocations.events()
        let a = try await f.service.signUp(email: "kim@example.com", password: "password1")
        let b = try await f.service.logIn(email: "kim@example.com", password: "password1")
        #expect(await caught {
            try await f.service.changePassword(sessionID: a.sessionID, currentPassword: "wrong-one", newPassword: "password2")
        } == .permissionDenied("currentPassword is incorrect."))
        #expect(await caught {
            try await f.service.changePassword(sessionID: a.sessionID, currentPassword: "password1", newPassword: "short")
        } == .invalidArgument("newPassword must be at least 8 characters"))
        _ = try await f.service.changePassword(sessionID: a.sessionID, currentPassword: "password1", newPassword: "password2")
        _ = try f.service.authenticate(accessToken: a.token)
        #expect(await caught { try f.service.authenticate(accessToken: b.token) }?.code == .unauthenticated)
        #expect(await caught { try await f.service.logIn(email: "kim@example.com", password: "password1") }?.code == .unauthenticated)
        _ = try await f.service.logIn(email: "kim@example.com", password: "password2")
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == RevocationEvent(uid: a.user.uid, sessionIDs: [b.sessionID], reason: .passwordChanged))
        // Anonymous accounts have no password to change.
        let anon = try await f.service.signInAnonymously()
        #expect(await caught {
            try await f.service.changePassword(sessionID: anon.sessionID, currentPassword: "x", newPassword: "password2")
        }?.code == .failedPrecondition)
    }

    @Test func loginRehashesWhenParametersChange() async throws {
        let storage = MemoryAuthStorage()
        let clock = TestClock()
        let old = AuthService(storage: storage, hasher: Fixture.hasher(), now: clock.function)
        let created = try await old.signUp(email: "lee@example.com", password: "password1")
        let oldHash = try #require(created.user.passwordHash)
        let stronger = PasswordHasher.Configuration(memoryKiB: 128, iterations: 2, parallelism: 1)
        let new = AuthService(storage: storage, hasher: Fixture.hasher(stronger), now: clock.function)
        _ = try await new.logIn(email: "lee@example.com", password: "password1")
        let newHash = try #require(await storage.user(uid: created.user.uid)?.passwordHash)
        #expect(newHash != oldHash)
        #expect(newHash.hasPrefix("$argon2id$v=19$m=128,t=2,p=1$"))
        _ = try await new.logIn(email: "lee@example.com", password: "password1")
        #expect(await storage.user(uid: created.user.uid)?.passwordHash == newHash)  // no needless re-hash
    }

    @Test func failedLoginsBackOffWithRetryAfter() async throws {
        let configuration = AuthService.Configuration(loginThrottle: .init(freeAccountFailures: 3, freeAddressFailures: 10,
                                                                           baseDelay: .seconds(30), maxDelay: .seconds(600)))
        let f = Fixture.service(configuration)
        _ = try await f.service.signUp(email: "max@example.com", password: "password1")
        for _ in 0..<4 {
            #expect(await caught { try await f.service.logIn(email: "max@example.com", password: "nope-nope", clientAddress: "1.2.3.4") }?.code
                == .unauthenticated)
        }
        // Blocked even with the right password, from any address.
        let blocked = await caught { try await f.service.logIn(email: "max@example.com", password: "password1", clientAddress: "5.6.7.8") }
        #expect(blocked?.code == .resourceExhausted)
        #expect(blocked?.retryAfter == 30)
        // Unknown emails are throttled exactly the same way (no enumeration through the throttle).
        for _ in 0..<4 { _ = await caught { try await f.service.logIn(email: "ghost@example.com", password: "nope-nope") } }
        #expect(await caught { try await f.service.logIn(email: "ghost@example.com", password: "x") }?.retryAfter == 30)
        f.clock.advance(seconds: 30)
        _ = try await f.service.logIn(email: "max@example.com", password: "password1")
        // Success reset the account's count: the next failure is free again.
        #expect(await caught { try await f.service.logIn(email: "max@example.com", password: "nope-nope") }?.code == .unauthenticated)
    }

    @Test func perAddressThrottleAcrossAccounts() async throws {
        let configuration = AuthService.Configuration(loginThrottle: .init(freeAccountFailures: 100, freeAddressFailures: 3))
        let f = Fixture.service(configuration)
        for i in 0..<4 {
            _ = await caught { try await f.service.logIn(email: "u\(i)@example.com", password: "password1", clientAddress: "9.9.9.9") }
        }
        #expect(await caught { try await f.service.logIn(email: "new@example.com", password: "password1", clientAddress: "9.9.9.9") }?.code
            == .resourceExhausted)
        #expect(await caught { try await f.service.logIn(email: "new@example.com", password: "password1", clientAddress: "8.8.8.8") }?.code
            == .unauthenticated)
    }

    @Test func disabledAccountsCannotSignInAndTheirSessionsStop() async throws {
        let f = Fixture.service()
        let a = try await f.service.signUp(email: "ned@example.com", password: "password1")
        try await f.service.setDisabled(uid: a.user.uid, true)
        #expect(await caught { try f.service.authenticate(accessToken: a.token) }?.code == .unauthenticated)
        #expect(await caught { try await f.service.logIn(email: "ned@example.com", password: "password1") }?.code == .permissionDenied)
        // A wrong password still reads as a wrong password.
        #expect(await caught { try await f.service.logIn(email: "ned@example.com", password: "password2") }?.code == .unauthenticated)
        try await f.service.setDisabled(uid: a.user.uid, false)
        _ = try await f.service.logIn(email: "ned@example.com", password: "password1")
    }

    @Test func errorsNeverQuotePasswordsOrTokens() async throws {
        let f = Fixture.service()
        let secret = "Sup3r-Secret-Pa55word"
        let a = try await f.service.signUp(email: "oz@example.com", password: secret)
        var messages: [String] = []
        for error in [
            await caught { try await f.service.logIn(email: "oz@example.com", password: secret + "x") },
            await caught { try await f.service.signUp(email: "oz@example.com", password: secret) },
            await caught { try await f.service.refresh(refreshToken: a.token) },
            await caught { try f.service.authenticate(accessToken: a.refreshToken) },
            await caught { try f.service.authenticate(accessToken: a.token + "x") },
            await caught { try await f.service.confirmPasswordReset(token: a.token, newPassword: secret) },
        ] { messages.append(try #require(error).description) }
        for message in messages {
            #expect(!message.contains(secret) && !message.contains(a.token) && !message.contains(a.refreshToken))
        }
    }

    @Test func sweepDeletesEndedSessions() async throws {
        let f = Fixture.service()
        let a = try await f.service.signUp(email: "pat@example.com", password: "password1")
        let b = try await f.service.logIn(email: "pat@example.com", password: "password1")
        try await f.service.logOut(sessionID: a.sessionID)
        f.clock.advance(seconds: 1)
        #expect(try await f.service.sweep().sessions == 1)
        #expect(await f.storage.session(id: a.sessionID) == nil)
        #expect(await f.storage.session(id: b.sessionID) != nil)
        f.clock.advance(seconds: 31 * 86_400)
        #expect(try await f.service.sweep().sessions == 1)
    }
}

@Suite struct EnumerationTimingTests {
    /// An unknown email costs one real Argon2 verification, like a wrong password. The two kinds of
    /// attempt alternate and each keeps its fastest run: the minimum is what the work costs, while other
    /// load on a shared machine only ever adds time, so this holds on a busy machine too.
    @Test func unknownEmailTakesAboutAsLongAsAWrongPassword() async throws {
        // Throttling stays out of the way: every attempt here must do its verification.
        let f = Fixture.service(AuthService.Configuration(loginThrottle: .init(freeAccountFailures: 100)),
                                parameters: .init(memoryKiB: 8_192, iterations: 2, parallelism: 1))
        _ = try await f.service.signUp(email: "timing@example.com", password: "password1")
        func seconds(_ email: String) async -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            _ = await caught { try await f.service.logIn(email: email, password: "wrong-password") }
            let elapsed = clock.now - start
            return Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)
        }
        var wrong = Double.infinity
        var unknown = Double.infinity
        // The fastest of eleven alternating runs each: a busy machine slows some runs, rarely all of them.
        for _ in 0..<11 {
            wrong = min(wrong, await seconds("timing@example.com"))
            unknown = min(unknown, await seconds("nobody-here@example.com"))
        }
        #expect(unknown > wrong / 3 && unknown < wrong * 3, "wrong password \(wrong)s, unknown email \(unknown)s")
    }
}
