import HearthCore

/// What a new password must satisfy: a length in characters within bounds, and a byte limit so Argon2's
/// input stays bounded. (Length is what NIST SP 800-63B asks for; composition rules are deliberately absent.)
public struct PasswordPolicy: Sendable, Hashable {
    /// Fewest characters (default 8).
    public var minLength: Int
    /// Most characters (default 128).
    public var maxLength: Int

    /// Makes a policy; bounds are clamped to what the byte limit can hold.
    public init(minLength: Int = 8, maxLength: Int = 128) {
        self.minLength = max(1, minLength)
        self.maxLength = min(max(self.minLength, maxLength), AuthLimits.maxPasswordBytes)
    }

    /// Checks a new password; `field` names the request field for the error message. The message never
    /// repeats the password.
    public func check(_ password: String, field: String = "password") throws(HearthError) {
        if password.isEmpty { throw .invalidArgument("\(field) is required") }
        if password.utf8.count > AuthLimits.maxPasswordBytes {
            throw .invalidArgument("\(field) must be at most \(maxLength) characters")
        }
        let length = password.count
        if length < minLength { throw .invalidArgument("\(field) must be at least \(minLength) characters") }
        if length > maxLength { throw .invalidArgument("\(field) must be at most \(maxLength) characters") }
    }

    /// Checks a password offered at login: only the hard byte limit applies, since the policy may have
    /// changed since the password was set.
    public static func checkOffered(_ password: String, field: String = "password") throws(HearthError) {
        if password.isEmpty { throw .invalidArgument("\(field) is required") }
        if password.utf8.count > AuthLimits.maxPasswordBytes {
            throw .invalidArgument("\(field) is longer than \(AuthLimits.maxPasswordBytes) bytes")
        }
    }
}
