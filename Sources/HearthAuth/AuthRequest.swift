import HearthCore

/// The JSON bodies of the `/v1/auth/...` endpoints (docs/api.md, Accounts), decoded with errors that name
/// the field.
/// Unknown fields are refused, as Firebase's REST API refuses unknown names, so a typo never passes silently.
public enum AuthRequest {
    /// `POST /v1/auth/signup {email, password, displayName?}`.
    public struct SignUp: Sendable, Equatable, CustomStringConvertible {
        /// The `email` field.
        public var email: String
        /// The `password` field.
        public var password: String
        /// The `displayName` field.
        public var displayName: String?

        /// Redacted: secrets never reach a log through string interpolation.
        public var description: String { "SignUp(email: \(email), password: <redacted>)" }

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            let body = try Body(json, allowed: ["email", "password", "displayName"])
            email = try body.string("email")
            password = try body.string("password")
            displayName = try body.optionalString("displayName")
        }
    }

    /// `POST /v1/auth/login {email, password}`.
    public struct LogIn: Sendable, Equatable, CustomStringConvertible {
        /// The `email` field.
        public var email: String
        /// The `password` field.
        public var password: String

        /// Redacted: secrets never reach a log through string interpolation.
        public var description: String { "LogIn(email: \(email), password: <redacted>)" }

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            let body = try Body(json, allowed: ["email", "password"])
            email = try body.string("email")
            password = try body.string("password")
        }
    }

    /// `POST /v1/auth/refresh {refreshToken}`.
    public struct Refresh: Sendable, Equatable, CustomStringConvertible {
        /// The `refreshToken` field.
        public var refreshToken: String

        /// Redacted: secrets never reach a log through string interpolation.
        public var description: String { "Refresh(refreshToken: <redacted>)" }

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            refreshToken = try Body(json, allowed: ["refreshToken"]).string("refreshToken")
        }
    }

    /// `POST /v1/auth/password {currentPassword, newPassword}`.
    public struct ChangePassword: Sendable, Equatable, CustomStringConvertible {
        /// The `currentPassword` field.
        public var currentPassword: String
        /// The `newPassword` field.
        public var newPassword: String

        /// Redacted: secrets never reach a log through string interpolation.
        public var description: String { "ChangePassword(passwords: <redacted>)" }

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            let body = try Body(json, allowed: ["currentPassword", "newPassword"])
            currentPassword = try body.string("currentPassword")
            newPassword = try body.string("newPassword")
        }
    }

    /// `POST /v1/auth/password-reset {email}`.
    public struct PasswordReset: Sendable, Equatable {
        /// The `email` field.
        public var email: String

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            email = try Body(json, allowed: ["email"]).string("email")
        }
    }

    /// `POST /v1/auth/password-reset/confirm {token, newPassword}`.
    public struct PasswordResetConfirm: Sendable, Equatable, CustomStringConvertible {
        /// The `token` field.
        public var token: String
        /// The `newPassword` field.
        public var newPassword: String

        /// Redacted: secrets never reach a log through string interpolation.
        public var description: String { "PasswordResetConfirm(token: <redacted>, newPassword: <redacted>)" }

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            let body = try Body(json, allowed: ["token", "newPassword"])
            token = try body.string("token")
            newPassword = try body.string("newPassword")
        }
    }

    /// `POST /v1/auth/verify-email/confirm {token}`.
    public struct VerifyEmailConfirm: Sendable, Equatable, CustomStringConvertible {
        /// The `token` field.
        public var token: String

        /// Redacted: secrets never reach a log through string interpolation.
        public var description: String { "VerifyEmailConfirm(token: <redacted>)" }

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            token = try Body(json, allowed: ["token"]).string("token")
        }
    }

    /// An admin's new account, also the shape of a fixture file's `users` entries:
    /// `{uid?, email?, password?, displayName?, emailVerified?, disabled?, claims?}`.
    public struct CreateUser: Sendable, Equatable, CustomStringConvertible {
        /// The account to make.
        public var user: AuthService.NewUser

        /// Redacted through `NewUser`'s description.
        public var description: String { "CreateUser(\(user))" }

        /// Decodes the body; `claims` is a map in the value wire encoding.
        public init(json: JSON) throws(HearthError) {
            let body = try Body(json, allowed: ["uid", "email", "password", "displayName", "emailVerified",
                                                "disabled", "claims"])
            user = AuthService.NewUser(
                uid: try body.optionalString("uid"), email: try body.optionalString("email"),
                password: try body.optionalString("password"), displayName: try body.optionalString("displayName"),
                emailVerified: try body.optionalBool("emailVerified") ?? false,
                claims: try body.optionalClaims("claims") ?? [:],
                disabled: try body.optionalBool("disabled") ?? false)
        }
    }

    /// An admin's claims update: `{claims: {...}}`.
    public struct SetClaims: Sendable, Equatable {
        /// The `claims` field.
        public var claims: [String: Value]

        /// Decodes the body.
        public init(json: JSON) throws(HearthError) {
            let body = try Body(json, allowed: ["claims"])
            guard let claims = try body.optionalClaims("claims") else { throw .invalidArgument("claims is required") }
            self.claims = claims
        }
    }

    /// A request body: a JSON object with known fields.
    struct Body {
        let fields: [String: JSON]

        init(_ json: JSON, allowed: Set<String>) throws(HearthError) {
            guard case .object(let pairs) = json else {
                throw .invalidArgument("the request body must be a JSON object, got \(json.kind)")
            }
            var fields: [String: JSON] = [:]
            for (key, value) in pairs {
                guard allowed.contains(key) else {
                    throw .invalidArgument("unknown field '\(key.prefix(64))'; expected \(allowed.sorted().joined(separator: ", "))")
                }
                fields[key] = value
            }
            self.fields = fields
        }

        func string(_ key: String) throws(HearthError) -> String {
            guard let value = try optionalString(key) else { throw .invalidArgument("\(key) is required") }
            return value
        }

        func optionalString(_ key: String) throws(HearthError) -> String? {
            switch fields[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            case let other?: throw .invalidArgument("\(key) must be a string, got \(other.kind)")
            }
        }

        func optionalBool(_ key: String) throws(HearthError) -> Bool? {
            switch fields[key] {
            case nil, .null?: return nil
            case .bool(let b)?: return b
            case let other?: throw .invalidArgument("\(key) must be a boolean, got \(other.kind)")
            }
        }

        func optionalClaims(_ key: String) throws(HearthError) -> [String: Value]? {
            switch fields[key] {
            case nil, .null?: return nil
            case .object(let pairs)?:
                var out: [String: Value] = [:]
                for (name, item) in pairs { out[name] = try Value(wire: item, field: "\(key).\(name)", depth: 1) }
                return out
            case let other?: throw .invalidArgument("\(key) must be an object, got \(other.kind)")
            }
        }
    }
}
