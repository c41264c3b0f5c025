import Crypto
import HearthCore

/// Standard Webhooks signing: `v1,` and the base64 of HMAC-SHA256, keyed with the endpoint's secret, of
/// `id.timestamp.body`; any Standard Webhooks library verifies it.
public enum WebhookSignature {
    /// The `webhook-signature` header's value for an event.
    public static func sign(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> String {
        // Fed in parts: the body, often the larger part, is not copied.
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: key))
        hmac.update(data: Array("\(id).\(timestamp).".utf8))
        hmac.update(data: body)
        return "v1," + Base64.encode(Array(hmac.finalize()))
    }
}
