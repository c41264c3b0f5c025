import Foundation
import HearthCore
import HearthMail
import HearthServer
import Logging

/// APNs and FCM on loopback (`APNsTestServer`, `FCMTestServer`) and the credentials both trust, with the push
/// settings that point Hearth at them.
public struct PushTestRig: Sendable {
    public let apns: APNsTestServer
    public let fcm: FCMTestServer
    public let credentials: PushTestCredentials
    /// The server's log, when `configure` is used.
    public let logs = LogCapture()

    /// Push settings pointing at the test servers, with quick retries.
    public func settings(maxAttempts: Int = 4, keys: PushTestCredentials? = nil) throws -> PushSettings {
        let keys = keys ?? credentials
        var apnsSettings = try APNsSettings(keyFile: keys.apnsKeyFile, keyID: PushTestCredentials.apnsKeyID,
                                            teamID: PushTestCredentials.apnsTeamID, topic: PushTestCredentials.apnsTopic,
                                            url: apns.url)
        try apnsSettings.trust(caFile: apns.certificate.certificate)
        var settings = PushSettings(apns: apnsSettings, fcm: try FCMSettings(credentialsFile: keys.fcmCredentialsFile, url: fcm.url))
        settings.retry = RetryPolicy(initialDelay: .milliseconds(20), multiplier: 1, maxDelay: .milliseconds(20), jitter: 0,
                                     maxAttempts: maxAttempts, maxAge: .seconds(3600))
        return settings
    }

    /// Test accounts, these push settings, a quick outbox and the log captured at `trace`.
    public func configure(_ settings: PushSettings) -> @Sendable (inout ServerConfiguration) -> Void {
        { [logs] configuration in
            configuration.useTestAccounts()
            configuration.push = settings
            configuration.outboxInterval = .milliseconds(20)
            configuration.logHandlerFactory = logs.factory
            configuration.logLevel = .trace
        }
    }

    /// Runs `body` with both services started, and stops them.
    public static func with<T>(_ body: (PushTestRig) async throws -> T) async throws -> T {
        let fcm = try await FCMTestServer.start()
        let credentials = try PushTestCredentials.make(in: TestFolders.make(), tokenURI: fcm.tokenURI)
        fcm.trust(credentials)
        let apns = try await APNsTestServer.start(trusting: credentials)
        let rig = PushTestRig(apns: apns, fcm: fcm, credentials: credentials)
        return try await withCleanup({ try await body(rig) }) {
            await apns.stop()
            await fcm.stop()
        }
    }

    /// A random APNs device token (64 hex digits).
    public static func apnsToken() -> String { (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }
    /// A random FCM registration token.
    public static func fcmToken() -> String { "fcm-" + makeAutoID() + ":APA91b" + makeAutoID() + makeAutoID() }
}
