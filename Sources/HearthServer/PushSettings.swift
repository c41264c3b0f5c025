import Crypto
import Foundation
import HearthCore
import HearthMail
import NIOSSL
import _CryptoExtras

/// Delivery of push notifications: APNs, FCM or both (`--apns-*`, `--fcm-*`). A platform without settings
/// still takes registrations; a notification for one of its devices is dead at once, with that reason (an
/// operator who configures it later may retry the dead ones).
public struct PushSettings: Sendable {
    /// Apple Push Notification service with token authentication.
    public var apns: APNsSettings?
    /// Firebase Cloud Messaging's HTTP v1 API with a service account.
    public var fcm: FCMSettings?
    /// When failed notifications are tried again, and when they are given up on (the outbox's policy).
    public var retry = RetryPolicy()
    /// Notifications sent at once.
    public var concurrency = 8

    public init(apns: APNsSettings? = nil, fcm: FCMSettings? = nil) {
        self.apns = apns
        self.fcm = fcm
    }
}

/// APNs settings: the .p8 signing key with its key id and team id, the app's bundle id (`apns-topic`) and
/// the server.
public struct APNsSettings: Sendable {
    /// Apple's production server.
    public static let production = "https://api.push.apple.com"
    /// Apple's development (sandbox) server.
    public static let sandbox = "https://api.sandbox.push.apple.com"

    let key: P256.Signing.PrivateKey
    let keyID: String
    let teamID: String
    let topic: String
    /// `https://host[:port]`, without a path.
    let baseURL: String
    /// Certificate authorities trusted besides the system's (a test server's).
    var trustRoots: [NIOSSLCertificate] = []
    /// Age at which the provider token is replaced: APNs refuses one older than an hour, and one replaced
    /// more often than every 20 minutes.
    var tokenLifetime: Duration = .seconds(50 * 60)

    /// Reads the key file now, so that a missing or wrong key stops the start.
    public init(keyFile: String, keyID: String, teamID: String, topic: String, url: String = production) throws(HearthError) {
        let pem: String
        do {
            pem = try String(contentsOfFile: keyFile, encoding: .utf8)
        } catch {
            throw .invalidArgument("apnsKey: cannot read \(keyFile): \(error.localizedDescription)")
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .invalidArgument("apnsKey: \(keyFile) is not a P-256 private key in PEM (the .p8 file from Apple's developer account)")
        }
        for (name, value) in [("apnsKeyId", keyID), ("apnsTeamId", teamID), ("apnsTopic", topic)] where value.isEmpty
            || value.contains(where: { $0.isWhitespace || $0.isNewline }) {
            throw .invalidArgument("\(name): a non-empty value without spaces is required with apnsKey")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        baseURL = try PushSettings.baseURL(url, setting: "apnsUrl")
    }

    /// Trusts the certificate authorities in a PEM file besides the system's.
    public mutating func trust(caFile path: String) throws(HearthError) {
        trustRoots += try TrustedCertificates.read(caFile: path, setting: "apnsCaFile")
    }
}

/// FCM settings: the service account (its JSON key file, as the Firebase console gives it) and the API's
/// base URL.
public struct FCMSettings: Sendable {
    /// Google's FCM endpoint.
    public static let production = "https://fcm.googleapis.com"
    /// The OAuth 2 scope of sending.
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    let projectID: String
    let clientEmail: String
    let privateKeyID: String?
    let key: _RSA.Signing.PrivateKey
    /// Where the grant is exchanged for an access token, used as the file gives it.
    let tokenURI: String
    let baseURL: String

    /// Reads and checks the service account file now, so that a bad one stops the start.
    public init(credentialsFile: String, url: String = production) throws(HearthError) {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: credentialsFile)))
        } catch {
            throw .invalidArgument("fcmCredentials: cannot read \(credentialsFile): \(error.localizedDescription)")
        }
        let json: JSON
        do {
            json = try JSON.parse(bytes)
        } catch {
            throw .invalidArgument("fcmCredentials: \(credentialsFile) is not JSON: \(error.message)")
        }
        func field(_ name: String) throws(HearthError) -> String {
            guard case .string(let value)? = json[name], !value.isEmpty else {
                throw .invalidArgument("fcmCredentials: \(credentialsFile) has no '\(name)'; expected a service account key file (\"type\": \"service_account\")")
            }
            return value
        }
        guard try field("type") == "service_account" else {
            throw .invalidArgument("fcmCredentials: \(credentialsFile) is not a service account key (\"type\" is not \"service_account\")")
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        if case .string(let id)? = json["private_key_id"] { privateKeyID = id } else { privateKeyID = nil }
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: try field("private_key"))
        } catch let error as HearthError {
            throw error
        } catch {
            throw .invalidArgument("fcmCredentials: the private_key of \(credentialsFile) is not an RSA private key in PEM")
        }
        tokenURI = try field("token_uri")
        guard let uri = URL(string: tokenURI), uri.scheme == "https" || uri.scheme == "http", uri.host != nil else {
            throw .invalidArgument("fcmCredentials: the token_uri of \(credentialsFile) is not an http(s) URL")
        }
        baseURL = try PushSettings.baseURL(url, setting: "fcmUrl")
    }
}

extension PushSettings {
    /// A service's base URL without its trailing slash; only a scheme, host and port.
    static func baseURL(_ text: String, setting: String) throws(HearthError) -> String {
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        guard let parsed = URL(string: url), parsed.scheme == "https" || parsed.scheme == "http", parsed.host != nil,
              parsed.path.isEmpty, parsed.query == nil else {
            throw .invalidArgument("\(setting): '\(text)' is not a URL like https://host[:port]")
        }
        return url
    }
}
