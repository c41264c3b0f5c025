import Crypto
import Foundation
import HearthCore

/// Checks a delivery by the Standard Webhooks specification: HMAC-SHA256, keyed with the endpoint's secret, of
/// `{webhook-id}.{webhook-timestamp}.{body}`, sent as `v1,<base64>` in `webhook-signature` (several signatures,
/// space-separated, while a secret is rotated), and a timestamp within 5 minutes of now.
public struct WebhookVerifier: Sendable {
    /// How far a timestamp may be from now, either way (the specification's 5 minutes): older deliveries are
    /// refused so a captured request cannot be replayed later.
    public static let tolerance: Duration = .seconds(5 * 60)

    let key: SymmetricKey

    /// Takes the endpoint's secret as written in the functions file: `whsec_` and base64 (the prefix and the
    /// padding may be left out, as the reference libraries allow).
    public init(secret: String) throws(FunctionsError) {
        var text = secret.hasPrefix("whsec_") ? String(secret.dropFirst(6)) : secret
        while text.count % 4 != 0 { text += "=" }
        guard let bytes = Base64.decode(text), !bytes.isEmpty else {
            throw FunctionsError.signature("the secret must be 'whsec_' and the base64 of its bytes (as in the functions file)")
        }
        key = SymmetricKey(data: bytes)
    }

    /// Verifies one delivery from its three headers and its body as received.
    public func verify(id: String?, timestamp: String?, signature: String?, body: some Collection<UInt8>,
                       now: Date = Date()) throws(FunctionsError) {
        guard let id, !id.isEmpty else { throw FunctionsError.signature("missing webhook-id header") }
        guard let timestamp, !timestamp.isEmpty else { throw FunctionsError.signature("missing webhook-timestamp header") }
        guard let signature, !signature.isEmpty else { throw FunctionsError.signature("missing webhook-signature header") }
        guard let seconds = Int64(timestamp) else {
            throw FunctionsError.signature("webhook-timestamp '\(timestamp.prefix(40))' is not whole seconds since 1970")
        }
        let age = now.timeIntervalSince1970 - Double(seconds)
        if age > Self.tolerance.inSeconds { throw FunctionsError.signature("webhook-timestamp is too old (more than 5 minutes)") }
        if age < -Self.tolerance.inSeconds { throw FunctionsError.signature("webhook-timestamp is too new (more than 5 minutes ahead)") }
        var message = Array("\(id).\(timestamp).".utf8)
        message += body
        for candidate in signature.split(separator: " ") {
            let parts = candidate.split(separator: ",", maxSplits: 1)
            // Other versions (v1a, asymmetric) are skipped, as the specification asks of a v1 verifier.
            guard parts.count == 2, parts[0] == "v1", let mac = Base64.decode(String(parts[1])) else { continue }
            // Constant time: CryptoKit's check compares every byte whatever the first difference.
            if HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: key) { return }
        }
        throw FunctionsError.signature("no webhook-signature matches the body with this secret")
    }

    /// The `webhook-signature` value for a message (what Hearth sends), for tests and for calling a handler by hand.
    public func sign(id: String, timestamp: Int64, body: some Collection<UInt8>) -> String {
        var message = Array("\(id).\(timestamp).".utf8)
        message += body
        return "v1," + Base64.encode(Array(HMAC<SHA256>.authenticationCode(for: message, using: key)))
    }
}
