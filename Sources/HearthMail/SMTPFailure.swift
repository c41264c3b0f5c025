/// Why a message did not reach a recipient, and whether trying again may help: a 4xx reply, a dropped
/// connection or a timeout is transient; a 5xx reply (or a server that cannot be used as configured) is
/// permanent.
public struct SMTPFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// True when trying again later cannot help.
    public var permanent: Bool
    /// What happened, with the server's reply when there was one.
    public var message: String

    /// A failure classified by its reply code.
    public init(reply: SMTPReply, during step: String) {
        permanent = reply.code >= 500
        message = "\(step): \(reply)"
    }

    /// A failure that may pass.
    public init(transient message: String) {
        permanent = false
        self.message = message
    }

    /// A failure that will not pass by itself.
    public init(permanent message: String) {
        permanent = true
        self.message = message
    }

    public var description: String { (permanent ? "permanent: " : "transient: ") + message }
}
