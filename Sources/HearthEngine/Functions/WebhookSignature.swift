import Crypto
import HearthCore

/// Standard Webhooks signing: `v1,` and the base64 of HMAC-SHA256, keyed with the endpoint's secret, of
/// `id.timestamp.body`; any Standard Webhooks library verifies it.
public enum WebhookSignature {
    /// The `webhook-signature` header's value for an event.
    public static func sign(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> String {
        Signer(key: key).sign(id: id, timestamp: timestamp, body: body)
    }

    /// An endpoint's key made ready once (HMAC's keyed state): each signature starts from a copy of it, which
    /// copies on its first update, so signers on several threads never share a state being changed.
    public struct Signer: @unchecked Sendable {
        private let keyed: HMAC<SHA256>

        /// Makes the keyed state for `key`.
        public init(key: [UInt8]) { keyed = HMAC<SHA256>(key: SymmetricKey(data: key)) }

        /// The `webhook-signature` header's value for an event.
        public func sign(id: String, timestamp: Int64, body: [UInt8]) -> String {
            var hmac = keyed
            // Fed in parts: the body, often the larger part, is not copied.
            hmac.update(data: Array("\(id).\(timestamp).".utf8))
            hmac.update(data: body)
            return "v1," + Base64.encode(Array(hmac.finalize()))
        }
    }
}
