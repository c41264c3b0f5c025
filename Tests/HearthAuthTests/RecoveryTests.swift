import HearthCore
import Testing
@testable import HearthAuth
import HearthTesting

@Suite struct RecoveryTests {
    @Test func passwordResetIsSingleUseAndRevokesSessions() async throws {
        let f = Fixture.service()
        let events = f.service.revocations.events()
        let a = try await f.service.signUp(email: "Quinn@Example.com", password: "password1")
        try await f.service.requestPasswordReset(email: "quinn@example.com")
        let mail = try #require(await f.storage.pendingOutbox(limit: 10).first)
        #expect(mail.purpose == .passwordReset && mail.to == "Quinn@Example.com" && mail.uid == a.user.uid)
        #expect(mail.token.hasPrefix("hrs_"))
        #expect(!"\(mail)".contains(mail.token))
        // A weak new password does not spend the token.
        #expect(await caught { try await f.service.confirmPasswordReset(token: mail.token, newPassword: "short") }?.code
            == .invalidArgument)
        try await f.service.confirmPasswordReset(token: mail.token, newPassword: "new-password")
        #expect(await caught { try f.service.authenticate(accessToken: a.token) }?.code == .unauthenticated)
        _ = try await f.service.logIn(email: "quinn@example.com", password: "new-password")
        let again = await caught { try await f.service.confirmPasswordReset(token: mail.token, newPassword: "other-password") }
        #expect(again == .invalidArgument("token: the password-reset link is invalid or has already been used."))
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == RevocationEvent(uid: a.user.uid, sessionIDs: nil, reason: .passwordReset))
    }

    @Test func resetTokensExpireAndOnlyTheNewestWorks() async throws {
        let f = Fixture.service()
        _ = try await f.service.signUp(email: "ray@example.com", password: "password1")
        try await f.service.requestPasswordReset(email: "ray@example.com")
        try await f.service.requestPasswordReset(email: "ray@example.com")
        let mails = await f.storage.pendingOutbox(limit: 10)
        #expect(mails.count == 2)
        #expect(await caught { try await f.service.confirmPasswordReset(token: mails[0].token, newPassword: "password2") }?.code
            == .invalidArgument)
        f.clock.advance(seconds: 3_600)
        #expect(await caught { try await f.service.confirmPasswordReset(token: mails[1].token, newPassword: "password2") }
            == .invalidArgument("token: the password-reset link has expired; ask for a new one."))
        #expect(try await f.service.sweep().oneTimeTokens == 0)  // consumed on the failed try
    }

    /// What the pages behind the links ask before they show a form: read without spending the code.
    @Test func aCodesStateIsReadWithoutSpendingIt() async throws {
        let f = Fixture.service()
        let a = try await f.service.signUp(email: "Vi@example.com", password: "password1")
        try await f.service.requestPasswordReset(email: "vi@example.com")
        let mail = try #require(await f.storage.pendingOutbox(limit: 1).first)
        let forged = String(mail.token.dropLast(4)) + (mail.token.hasSuffix("AAAA") ? "BBBB" : "AAAA")
        let cases: [(String, OneTimeTokenRecord.Purpose, OneTimeCodeState)] = [
            (mail.token, .passwordReset, .valid(email: "Vi@example.com")),
            (mail.token, .passwordReset, .valid(email: "Vi@example.com")),  // looking twice spends nothing
            (mail.token, .emailVerification, .malformed),  // a reset code is no verification code
            ("hrs_short", .passwordReset, .malformed),
            ("", .passwordReset, .malformed),
            (forged, .passwordReset, .unknown),
        ]
        for (code, purpose, expected) in cases {
            #expect(try await f.service.oneTimeCodeState(code, purpose: purpose) == expected, "\(code.prefix(8)) \(purpose)")
        }
        f.clock.advance(seconds: 3_600)
        #expect(try await f.service.oneTimeCodeState(mail.token, purpose: .passwordReset) == .expired)
        f.clock.advance(seconds: -3_600)
        _ = try await f.service.setDisabled(uid: a.user.uid, true)
        #expect(try await f.service.oneTimeCodeState(mail.token, purpose: .passwordReset) == .unknown, "a disabled account's code")
    }

    @Test func resetAnswersTheSameForUnknownEmails() async throws {
        let f = Fixture.service()
        _ = try await f.service.signUp(email: "sam@example.com", password: "password1")
        try await f.service.requestPasswordReset(email: "nobody@example.com")
        #expect(try await f.storage.pendingOutbox(limit: 10).isEmpty)
        try await f.service.requestPasswordReset(email: "sam@example.com")
        #expect(try await f.storage.pendingOutbox(limit: 10).count == 1)
        #expect(await caught { try await f.service.requestPasswordReset(email: "not-an-email") }?.code == .invalidArgument)
    }

    @Test func resetRequestsAreRateLimited() async throws {
        let f = Fixture.service()
        _ = try await f.service.signUp(email: "tia@example.com", password: "password1")
        // Per account: silently dropped after the free ones, so the outbox cannot flood a mailbox.
        for _ in 0..<10 { try await f.service.requestPasswordReset(email: "tia@example.com") }
        #expect(try await f.storage.pendingOutbox(limit: 100).count == 4)
        // Per address: refused openly (it says nothing about any account).
        for i in 0..<21 { try await f.service.requestPasswordReset(email: "x\(i)@example.com", clientAddress: "7.7.7.7") }
        let error = await caught { try await f.service.requestPasswordReset(email: "y@example.com", clientAddress: "7.7.7.7") }
        #expect(error?.code == .resourceExhausted && error?.retryAfter != nil)
    }

    @Test func resetForADeletedOrChangedEmailFails() async throws {
        let f = Fixture.service()
        let a = try await f.service.signUp(email: "uma@example.com", password: "password1")
        try await f.service.requestPasswordReset(email: "uma@example.com")
        let mail = try #require(await f.storage.pendingOutbox(limit: 1).first)
        var user = try #require(await f.storage.user(uid: a.user.uid))
        user.email = "uma2@example.com"
        user.emailNormalized = "uma2@example.com"
        try await f.storage.updateUser(user)
        #expect(await caught { try await f.service.confirmPasswordReset(token: mail.token, newPassword: "password2") }?.code
            == .invalidArgument)
    }

    @Test func emailVerification() async throws {
        let f = Fixture.service()
        let events = f.service.revocations.events()
        let a = try await f.service.signUp(email: "val@example.com", password: "password1")
        try await f.service.requestEmailVerification(sessionID: a.sessionID)
        let mail = try #require(await f.storage.pendingOutbox(limit: 1).first)
        #expect(mail.purpose == .emailVerification && mail.token.hasPrefix("hev_"))
        // A reset token is not a verification token.
        #expect(await caught { try await f.service.confirmEmailVerification(token: Tokens.generate(.passwordReset)) }?.code
            == .invalidArgument)
        let user = try await f.service.confirmEmailVerification(token: mail.token)
        #expect(user.emailVerified)
        let (identity, _) = try f.service.authenticate(accessToken: a.token)
        guard case .user(_, let token) = identity else { Issue.record("not a user"); return }
        #expect(token["email_verified"] == .bool(true))
        #expect(await caught { try await f.service.confirmEmailVerification(token: mail.token) }?.code == .invalidArgument)
        var iterator = events.makeAsyncIterator()
        let event = await iterator.next()
        #expect(event?.reason == .identityChanged && event?.revokes == false)
        // Already verified: nothing more is sent.
        try await f.service.requestEmailVerification(sessionID: a.sessionID)
        #expect(try await f.storage.pendingOutbox(limit: 10).count == 1)
    }

    @Test func verificationTokensExpireAndNeedAnEmail() async throws {
        let f = Fixture.service()
        let a = try await f.service.signUp(email: "wes@example.com", password: "password1")
        try await f.service.requestEmailVerification(sessionID: a.sessionID)
        let mail = try #require(await f.storage.pendingOutbox(limit: 1).first)
        f.clock.advance(seconds: 3 * 86_400)
        _ = try await f.service.refresh(refreshToken: a.refreshToken)
        #expect(await caught { try await f.service.confirmEmailVerification(token: mail.token) }?.message.contains("expired") == true)
        let anon = try await f.service.signInAnonymously()
        #expect(await caught { try await f.service.requestEmailVerification(sessionID: anon.sessionID) }?.code == .failedPrecondition)
    }

    @Test func outboxDelivery() async throws {
        let f = Fixture.service()
        _ = try await f.service.signUp(email: "xia@example.com", password: "password1")
        try await f.service.requestPasswordReset(email: "xia@example.com")
        #expect(try await f.service.deliverOutbox { _ in false } == 0)
        #expect(try await f.storage.pendingOutbox(limit: 10).count == 1)
        #expect(try await f.service.deliverOutbox { $0.to == "xia@example.com" } == 1)
        #expect(try await f.storage.pendingOutbox(limit: 10).isEmpty)
    }
}
