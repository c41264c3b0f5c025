import Crypto
import HearthCore
import _CryptoExtras

/// The JSON Web Tokens push services take (RFC 7519, compact form): APNs's provider token, signed ES256 with
/// the .p8 key, and the OAuth 2 JWT-bearer grant (RFC 7523) that FCM's service account exchanges for an
/// access token, signed RS256.
enum PushJWT {
    /// `base64url(header).base64url(claims)`, the part a signature covers.
    static func signingInput(header: JSON, claims: JSON) -> String {
        base64URL(header.serialized()) + "." + base64URL(claims.serialized())
    }

    /// A token signed ES256 (ECDSA P-256 with SHA-256; the signature as r‖s, 64 bytes, as JWS asks).
    static func es256(header: JSON, claims: JSON, key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Array(input.utf8))
        return input + "." + base64URL(Array(signature.rawRepresentation))
    }

    /// A token signed RS256 (RSASSA-PKCS1-v1_5 with SHA-256).
    static func rs256(header: JSON, claims: JSON, key: _RSA.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(Array(signature.rawRepresentation))
    }

    /// Base64 with the URL alphabet and no padding (RFC 7515 §2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Base64.encode(bytes)
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The bytes of a base64url text, or nil.
    static func decodeBase64URL(_ text: some StringProtocol) -> [UInt8]? {
        var plain = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while plain.count % 4 != 0 { plain.append("=") }
        return Base64.decode(plain)
    }
}
