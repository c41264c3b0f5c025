import HearthCore

extension AuthService {
    /// Queues a password-reset message if the email has an account. The answer is the same whether or not
    /// it does; only a flood from one client address is refused (`resource-exhausted`). Repeated requests
    /// for one account are dropped silently after a few, so the outbox cannot be used to spam anyone.
    public func requestPasswordReset(email rawEmail: String, clientAddress: String? = nil) async throws(HearthError) {
        let email = try EmailAddress(rawEmail)
        let accountWait: Int? = try mailThrottle.withLock { (throttle) throws(HearthError) -> Int? in
            if let wait = throttle.retryAfter(account: nil, address: clientAddress) {
                throw .resourceExhausted("Too many requests; try again in \(wait) seconds.", retryAfter: wait)
            }
            let wait = throttle.retryAfter(account: email.normalized, address: nil)
            throttle.recordFailure(account: email.normalized, address: clientAddress)
            return wait
        }
        guard accountWait == nil,
              let user = try await storage.user(emailNormalized: email.normalized),
              !user.disabled, let to = user.email, let normalized = user.emailNormalized
        else { return }
        try await issueOneTimeToken(.passwordReset, uid: user.uid, to: to, emailNormalized: normalized,
                                    lifetime: configuration.passwordResetLifetime)
    }

    /// Sets a new password with a reset token (single use, expiring, bound to the email it was sent to).
    /// Every session of the account ends and the login backoff is cleared. The new password is checked
    /// first, so a weak one does not spend the token.
    @discardableResult
    public func confirmPasswordReset(token: String, newPassword: String) async throws(HearthError) -> UserRecord {
        try configuration.passwordPolicy.check(newPassword, field: "newPassword")
        var user = try await consume(token, kind: .passwordReset, purpose: .passwordReset, name: "password-reset")
        user.passwordHash = try await hasher.hash(newPassword)
        try await storage.updateUser(user)
        _ = try await storage.revokeSessions(uid: user.uid, except: nil, at: now())
        revocations.publish(RevocationEvent(uid: user.uid, sessionIDs: nil, reason: .passwordReset))
        loginThrottle.withLock { $0.recordSuccess(account: user.emailNormalized) }
        return user
    }

    /// Queues a verification message to the signed-in account's email (nothing if already verified).
    public func requestEmailVerification(sessionID: String) async throws(HearthError) {
        let (_, user) = try await liveSession(sessionID)
        guard let to = user.email, let normalized = user.emailNormalized else {
            throw .failedPrecondition("This account has no email address to verify.")
        }
        guard !user.emailVerified else { return }
        // The caller is signed in, so a refusal here reveals nothing about other accounts.
        let wait: Int? = mailThrottle.withLock { throttle in
            let wait = throttle.retryAfter(account: "verify:" + user.uid, address: nil)
            if wait == nil { throttle.recordFailure(account: "verify:" + user.uid, address: nil) }
            return wait
        }
        if let wait {
            throw .resourceExhausted("A verification email was sent recently; try again in \(wait) seconds.",
                                     retryAfter: wait)
        }
        try await issueOneTimeToken(.emailVerification, uid: user.uid, to: to, emailNormalized: normalized,
                                    lifetime: configuration.emailVerificationLifetime)
    }

    /// Marks the email verified with a verification token (single use, expiring, bound to the email).
    @discardableResult
    public func confirmEmailVerification(token: String) async throws(HearthError) -> UserRecord {
        var user = try await consume(token, kind: .emailVerification, purpose: .emailVerification,
                                     name: "verification")
        if !user.emailVerified {
            user.emailVerified = true
            try await storage.updateUser(user)
            revocations.publish(RevocationEvent(uid: user.uid, sessionIDs: nil, reason: .identityChanged))
        }
        return user
    }

    /// What a password-reset or verification code is, without spending it. A code whose account is gone,
    /// disabled, or no longer has the address it was sent to reads as `unknown`, as `consume` refuses it.
    public func oneTimeCodeState(_ token: String, purpose: OneTimeTokenRecord.Purpose) async throws(HearthError)
        -> OneTimeCodeState {
        guard Tokens.isWellFormed(token, purpose == .passwordReset ? .passwordReset : .emailVerification) else {
            return .malformed
        }
        guard let record = try await storage.oneTimeToken(hash: Tokens.hash(token), purpose: purpose) else { return .unknown }
        guard now() < record.expiresAt else { return .expired }
        guard let user = try await storage.user(uid: record.uid), !user.disabled,
              user.emailNormalized == record.emailNormalized, let email = user.email
        else { return .unknown }
        return .valid(email: email)
    }

    private func issueOneTimeToken(_ purpose: OneTimeTokenRecord.Purpose, uid: String, to: String,
                                   emailNormalized: String, lifetime: Duration) async throws(HearthError) {
        let token = Tokens.generate(purpose == .passwordReset ? .passwordReset : .emailVerification)
        let time = now()
        let expires = time.adding(lifetime)
        try await storage.replaceOneTimeToken(
            OneTimeTokenRecord(tokenHash: Tokens.hash(token), purpose: purpose, uid: uid, emailNormalized: emailNormalized,
                               createdAt: time, expiresAt: expires),
            queueing: OutboxMessage(id: makeAutoID(), purpose: OutboxMessage.Purpose(purpose), to: to, uid: uid,
                                    token: token, expiresAt: expires, createdAt: time))
    }

    /// Spends a one-time token and answers its account; every failure reads the same apart from expiry.
    private func consume(_ token: String, kind: Tokens.Kind, purpose: OneTimeTokenRecord.Purpose, name: String)
        async throws(HearthError) -> UserRecord {
        let invalid = HearthError.invalidArgument("token: the \(name) link is invalid or has already been used.")
        guard Tokens.isWellFormed(token, kind) else { throw invalid }
        guard let record = try await storage.consumeOneTimeToken(hash: Tokens.hash(token), purpose: purpose) else {
            throw invalid
        }
        guard now() < record.expiresAt else {
            throw .invalidArgument("token: the \(name) link has expired; ask for a new one.")
        }
        guard let user = try await storage.user(uid: record.uid), !user.disabled,
              user.emailNormalized == record.emailNormalized
        else { throw invalid }
        return user
    }
}
