import Crypto
import Foundation
import HearthCore
import _CryptoExtras

/// Keys for push tests, written as the services hand them out: an APNs .p8 signing key (PKCS#8 PEM, P-256)
/// and an FCM service account key file (JSON with an RSA key), whose `token_uri` points at a test server.
public struct PushTestCredentials: Sendable {
    /// The APNs key and the file holding it.
    public let apnsKey: P256.Signing.PrivateKey
    public let apnsKeyFile: String
    public static let apnsKeyID = "ABC123DEFG"
    public static let apnsTeamID = "DEF123GHIJ"
    public static let apnsTopic = "com.example.letter"
    /// The service account's key and its JSON file.
    public let fcmKey: _RSA.Signing.PrivateKey
    public let fcmCredentialsFile: String
    public static let fcmProject = "letter-test"
    public static let fcmClientEmail = "hearth@letter-test.iam.gserviceaccount.com"

    /// Makes both in `folder`, the service account's `token_uri` set to `tokenURI`.
    public static func make(in folder: String, tokenURI: String) throws -> PushTestCredentials {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let apnsKey = P256.Signing.PrivateKey()
        let apnsKeyFile = folder + "/AuthKey_\(apnsKeyID).p8"
        try apnsKey.pemRepresentation.write(toFile: apnsKeyFile, atomically: true, encoding: .utf8)
        let fcmKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let account = JSON.object([
            ("type", .string("service_account")), ("project_id", .string(fcmProject)),
            ("private_key_id", .string("0123456789abcdef")), ("private_key", .string(fcmKey.pkcs8PEMRepresentation)),
            ("client_email", .string(fcmClientEmail)), ("client_id", .string("1234567890")),
            ("auth_uri", .string("https://accounts.google.com/o/oauth2/auth")), ("token_uri", .string(tokenURI)),
        ])
        let fcmCredentialsFile = folder + "/service-account.json"
        try Data(account.serialized()).write(to: URL(fileURLWithPath: fcmCredentialsFile))
        return PushTestCredentials(apnsKey: apnsKey, apnsKeyFile: apnsKeyFile, fcmKey: fcmKey, fcmCredentialsFile: fcmCredentialsFile)
    }

    /// A private key of another curve than APNs's, in PEM.
    public static func p384KeyPEM() -> String { P384.Signing.PrivateKey().pemRepresentation }

    /// The pieces of a compact JWT, decoded: header, claims, the signed input and the signature.
    static func decodeJWT(_ jwt: String) -> (header: JSON, claims: JSON, input: String, signature: [UInt8])? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = base64URL(parts[0]).flatMap({ try? JSON.parse($0) }),
              let claims = base64URL(parts[1]).flatMap({ try? JSON.parse($0) }), let signature = base64URL(parts[2]) else { return nil }
        return (header, claims, parts[0] + "." + parts[1], signature)
    }

    static func base64URL(_ text: Substring) -> [UInt8]? {
        var plain = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while plain.count % 4 != 0 { plain.append("=") }
        return Data(base64Encoded: plain).map(Array.init)
    }
}
