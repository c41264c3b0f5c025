import HearthCore

extension AuthService {
    /// Lifetimes, policies and limits of the account flows.
    public struct Configuration: Sendable, Hashable {
        /// Seconds an access token works (default one hour, Firebase's ID-token lifetime).
        public var accessTokenLifetime: Int64
        /// Seconds a refresh token works; each refresh issues a new one with a fresh lifetime (default 30 days).
        public var refreshTokenLifetime: Int64
        /// Seconds a password-reset token works (default one hour).
        public var passwordResetLifetime: Int64
        /// Seconds an email-verification token works (default three days).
        public var emailVerificationLifetime: Int64
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
        public init(accessTokenLifetime: Int64 = 3_600, refreshTokenLifetime: Int64 = 30 * 86_400,
                    passwordResetLifetime: Int64 = 3_600, emailVerificationLifetime: Int64 = 3 * 86_400,
                    passwordPolicy: PasswordPolicy = PasswordPolicy(),
                    loginThrottle: LoginThrottle.Configuration = LoginThrottle.Configuration(),
                    mailThrottle: LoginThrottle.Configuration = LoginThrottle.Configuration(
                        freeAccountFailures: 3, freeAddressFailures: 20, baseDelaySeconds: 60,
                        maxDelaySeconds: 3_600, forgetAfterSeconds: 86_400),
                    creationThrottle: LoginThrottle.Configuration = LoginThrottle.Configuration(
                        freeAccountFailures: 0, freeAddressFailures: 30, baseDelaySeconds: 2,
                        maxDelaySeconds: 600, forgetAfterSeconds: 3_600),
                    allowAnonymous: Bool = true) {
            self.accessTokenLifetime = max(1, accessTokenLifetime)
            self.refreshTokenLifetime = max(1, refreshTokenLifetime)
            self.passwordResetLifetime = max(1, passwordResetLifetime)
            self.emailVerificationLifetime = max(1, emailVerificationLifetime)
            self.passwordPolicy = passwordPolicy
            self.loginThrottle = loginThrottle
            self.mailThrottle = mailThrottle
            self.creationThrottle = creationThrottle
            self.allowAnonymous = allowAnonymous
        }
    }
}
