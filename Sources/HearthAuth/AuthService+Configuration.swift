import HearthCore

extension AuthService {
    /// Lifetimes, policies and limits of the account flows.
    public struct Configuration: Sendable, Hashable {
        /// How long an access token works (default one hour, Firebase's ID-token lifetime), in whole seconds.
        public var accessTokenLifetime: Duration
        /// How long a refresh token works; each refresh issues a new one with a fresh lifetime (default 30 days).
        public var refreshTokenLifetime: Duration
        /// How long a password-reset token works (default one hour).
        public var passwordResetLifetime: Duration
        /// How long an email-verification token works (default three days).
        public var emailVerificationLifetime: Duration
        /// Rules for new passwords.
        public var passwordPolicy: PasswordPolicy
        /// Backoff for failed password checks (login, password change).
        public var loginThrottle: LoginThrottle.Configuration
        /// Backoff for mail-sending requests (password reset, verification): every request counts.
        public var mailThrottle: LoginThrottle.Configuration
        /// Backoff for account creation (sign-up, anonymous sign-in) per client address: every creation
        /// counts, so one client cannot fill the hashing queue or the user table.
        public var creationThrottle: LoginThrottle.Configuration
        /// Whether `signInAnonymously` is allowed.
        public var allowAnonymous: Bool

        /// Firebase-like defaults.
        public init(accessTokenLifetime: Duration = .seconds(3_600), refreshTokenLifetime: Duration = .seconds(30 * 86_400),
                    passwordResetLifetime: Duration = .seconds(3_600), emailVerificationLifetime: Duration = .seconds(3 * 86_400),
                    passwordPolicy: PasswordPolicy = PasswordPolicy(),
                    loginThrottle: LoginThrottle.Configuration = LoginThrottle.Configuration(),
                    mailThrottle: LoginThrottle.Configuration = LoginThrottle.Configuration(
                        freeAccountFailures: 3, freeAddressFailures: 20, baseDelay: .seconds(60),
                        maxDelay: .seconds(3_600), forgetAfter: .seconds(86_400)),
                    creationThrottle: LoginThrottle.Configuration = LoginThrottle.Configuration(
                        freeAccountFailures: 0, freeAddressFailures: 30, baseDelay: .seconds(2),
                        maxDelay: .seconds(600), forgetAfter: .seconds(3_600)),
                    allowAnonymous: Bool = true) {
            self.accessTokenLifetime = max(.seconds(1), accessTokenLifetime)
            self.refreshTokenLifetime = max(.seconds(1), refreshTokenLifetime)
            self.passwordResetLifetime = max(.seconds(1), passwordResetLifetime)
            self.emailVerificationLifetime = max(.seconds(1), emailVerificationLifetime)
            self.passwordPolicy = passwordPolicy
            self.loginThrottle = loginThrottle
            self.mailThrottle = mailThrottle
            self.creationThrottle = creationThrottle
            self.allowAnonymous = allowAnonymous
        }
    }
}
