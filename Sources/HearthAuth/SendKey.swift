import Crypto
import HearthCore

/// A sender's `Idempotency-Key` for one app email or push request: sent again with the same key and the same
/// request (a function retried after a failure, a client after a lost answer), it queues nothing and answers
/// the ids queued the first time; with another request it is refused (`unprocessable-content`, 422). Keys are
/// kept a day.
public struct SendKey: Sendable, Equatable {
    /// The key as the sender gave it.
    public let key: String
    /// The SHA-256 of the request's JSON, as parsed and written again.
    public let fingerprint: [UInt8]

    /// How long a key is remembered.
    public static let lifetime: Duration = .seconds(24 * 3600)

    /// Reads the header's value (nil when absent) for `request`; a key that is empty, longer than 255
    /// characters or not printable ASCII is refused.
    public init?(header: String?, request: JSON) throws(HearthError) {
        guard let header else { return nil }
        guard (1...255).contains(header.utf8.count), header.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw .invalidArgument("Idempotency-Key must be 1 to 255 printable ASCII characters without spaces")
        }
        key = header
        fingerprint = Array(SHA256.hash(data: request.serialized()))
    }

    /// The refusal of a key sent before with another request.
    public var reused: HearthError {
        HearthError(.unprocessableContent, "Idempotency-Key '\(key)' was used with a different request")
    }
}
