import Foundation
import HearthCore
import HearthMail
import HearthServer
import HearthTesting
import Logging
import Testing

/// Push notifications end to end: Hearth registers devices, queues sends and delivers them to an APNs test
/// server (HTTP/2 over TLS, checking the ES256 provider token and headers) and an FCM test server (checking
/// the RS256 JWT-bearer grant and the bearer), started by each test; every documented answer as a table.
@Suite(.serialized) struct PushDeliveryTests {
    static let password = "correct horse battery"

    /// The two services and the credentials they trust (`PushTestRig`, shared with the apps' function tests).
    typealias Rig = PushTestRig

    static func withRig<T>(_ body: (Rig) async throws -> T) async throws -> T { try await PushTestRig.with(body) }

    static func apnsToken() -> String { PushTestRig.apnsToken() }
    static func fcmToken() -> String { PushTestRig.fcmToken() }

    /// Registers a device for a user; answers its id.
    static func register(_ client: HearthClient, _ user: SignedIn, token: String, platform: String,
                         topics: [String] = []) async throws -> String {
        let body = JSON.object([("token", .string(token)), ("platform", .string(platform)),
                                ("topics", .array(topics.map { .string($0) }))]).text
        let answer = try await client.post("/v1/push/devices", body, as: .token(user.token))
        guard answer.status == 201 || answer.status == 200, let id = answer.json?["id"]?.stringValue else {
            throw ExpectationFailure("registration failed: \(answer.status) \(answer.text)")
        }
        return id
    }

    static func send(_ client: HearthClient, to kind: String, _ name: String, title: String = "Hello",
                     data: [(String, String)] = [("letter", "42")]) async throws -> HTTPResult {
        try await client.post("/v1/push/send", JSON.object([
            ("to", .object([(kind, .string(name))])),
            ("notification", .object([("title", .string(title)), ("body", .string("You have a letter"))])),
            ("data", .object(data.map { ($0.0, .string($0.1)) })),
        ]).text)
    }

    /// Waits until `done` holds, for a generous while.
    static func eventually(_ what: String, _ done: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try await done() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ExpectationFailure("timed out waiting for \(what)")
    }

    static func queue(_ client: HearthClient) async throws -> (pending: [JSON], dead: [JSON]) {
        let json = try await client.get("/v1/admin/push").json
        guard case .array(let pending)? = json?["pending"], case .array(let dead)? = json?["dead"] else {
            throw ExpectationFailure("GET /v1/admin/push did not answer the queue")
        }
        return (pending, dead)
    }

    static func deviceIDs(_ client: HearthClient, _ user: SignedIn) async throws -> [String] {
        guard case .array(let devices)? = try await client.get("/v1/push/devices", as: .token(user.token)).json?["devices"] else { return [] }
        return devices.compactMap { $0["id"]?.stringValue }
    }

    /// What should become of a notification.
    enum Fate: Equatable {
        case delivered(attempts: Int)
        case dropped
        case dead(String)
    }

    struct APNsCase: Sendable {
        let name: String
        let answers: [APNsTestServer.Answer]
        let fate: Fate
    }

    static let apnsCases: [APNsCase] = [
        .init(name: "200", answers: [], fate: .delivered(attempts: 1)),
        .init(name: "400 BadDeviceToken", answers: [.init(400, "BadDeviceToken")], fate: .dropped),
        .init(name: "410 Unregistered", answers: [.init(410, "Unregistered")], fate: .dropped),
        .init(name: "429 then 200", answers: [.init(429, "TooManyRequests")], fate: .delivered(attempts: 2)),
        .init(name: "500 then 200", answers: [.init(500, "InternalServerError")], fate: .delivered(attempts: 2)),
        .init(name: "503 with Retry-After then 200", answers: [.init(503, "ServiceUnavailable", retryAfter: "1")], fate: .delivered(attempts: 2)),
        .init(name: "403 InvalidProviderToken", answers: [.init(403, "InvalidProviderToken")], fate: .dead("APNs answered 403 InvalidProviderToken")),
        .init(name: "403 ExpiredProviderToken then 200", answers: [.init(403, "ExpiredProviderToken")], fate: .delivered(attempts: 2)),
        .init(name: "400 BadTopic", answers: [.init(400, "BadTopic")], fate: .dead("APNs answered 400 BadTopic")),
        .init(name: "429 every time", answers: Array(repeating: .init(429, "TooManyRequests"), count: 4),
              fate: .dead("gave up after 4 attempts")),
    ]

    struct FCMCase: Sendable {
        let name: String
        let answers: [FCMTestServer.Answer]
        let fate: Fate
    }

    static let fcmCases: [FCMCase] = [
        .init(name: "200", answers: [], fate: .delivered(attempts: 1)),
        .init(name: "404 UNREGISTERED", answers: [.init(404, status: "NOT_FOUND", errorCode: "UNREGISTERED")], fate: .dropped),
        .init(name: "400 INVALID_ARGUMENT on the token",
              answers: [.init(400, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", tokenViolation: true)], fate: .dropped),
        .init(name: "400 INVALID_ARGUMENT elsewhere", answers: [.init(400, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT")],
              fate: .dead("FCM answered 400 INVALID_ARGUMENT")),
        .init(name: "429 with Retry-After then 200", answers: [.init(429, status: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED", retryAfter: "1")],
              fate: .delivered(attempts: 2)),
        .init(name: "500 then 200", answers: [.init(500, status: "INTERNAL", errorCode: "INTERNAL")], fate: .delivered(attempts: 2)),
        .init(name: "503 then 200", answers: [.init(503, status: "UNAVAILABLE", errorCode: "UNAVAILABLE")], fate: .delivered(attempts: 2)),
        .init(name: "403 SENDER_ID_MISMATCH", answers: [.init(403, status: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH")],
              fate: .dead("FCM answered 403 PERMISSION_DENIED SENDER_ID_MISMATCH")),
        .init(name: "401 UNAUTHENTICATED then 200", answers: [.init(401, status: "UNAUTHENTICATED")], fate: .delivered(attempts: 2)),
        .init(name: "503 every time", answers: Array(repeating: .init(503, status: "UNAVAILABLE"), count: 4),
              fate: .dead("gave up after 4 attempts")),
    ]

    /// Every documented answer of both services, each on a device of its own, in one server: delivered,
    /// dropped (the device gone), retried (honouring Retry-After) or dead with the reason. Then the logs
    /// and the data file hold no device token, key or access token in clear, and the metrics count it all.
    @Test func everyAnswerOfAPNsAndFCM() async throws {
        try await Self.withRig { rig in
            try await TestServer.with(configure: rig.configure(try rig.settings())) { server, client in
                let user = try await client.signedUp("ann@example.com", Self.password)
                var rows: [(name: String, token: String, platform: String, fate: Fate, device: String)] = []
                for row in Self.apnsCases {
                    let token = Self.apnsToken()
                    rig.apns.answer(token, with: row.answers)
                    rows.append((row.name, token, "apns", row.fate, try await Self.register(client, user, token: token, platform: "apns")))
                }
                for row in Self.fcmCases {
                    let token = Self.fcmToken()
                    rig.fcm.answer(token, with: row.answers)
                    rows.append((row.name, token, "fcm", row.fate, try await Self.register(client, user, token: token, platform: "fcm")))
                }
                for row in rows {
                    let answer = try await Self.send(client, to: "device", row.device)
                    #expect(answer.status == 202, "\(row.name): \(answer.text)")
                }
                try await Self.eventually("every notification to settle") { try await Self.queue(client).pending.isEmpty }
                let (_, dead) = try await Self.queue(client)
                let devices = try await Self.deviceIDs(client, user)
                for row in rows {
                    let attempts = row.platform == "apns"
                        ? rig.apns.received.filter { $0.token == row.token }.count
                        : rig.fcm.received.filter { $0.token == row.token }.count
                    let buried = dead.first { $0["device"]?.stringValue == row.device }
                    switch row.fate {
                    case .delivered(let expected):
                        #expect(attempts == expected, "\(row.platform) \(row.name)")
                        #expect(buried == nil && devices.contains(row.device), "\(row.platform) \(row.name)")
                    case .dropped:
                        #expect(attempts == 1, "\(row.platform) \(row.name)")
                        #expect(!devices.contains(row.device), "\(row.platform) \(row.name): the device is dropped")
                    case .dead(let reason):
                        let error = buried?["lastError"]?.stringValue ?? ""
                        #expect(error.contains(reason), "\(row.platform) \(row.name): \(error)")
                        #expect(devices.contains(row.device), "\(row.platform) \(row.name): the device stays")
                    }
                }
                // One access token served every FCM send (it is kept until near its expiry), and one more after
                // FCM's 401.
                #expect(rig.fcm.grants == 2)
                #expect(rig.fcm.refusedGrants.isEmpty)

                let logs = rig.logs.text
                #expect(logs.contains("push notification sent"))
                for row in rows { #expect(!logs.contains(row.token), "the log names the token of \(row.name)") }
                for secret in ["PRIVATE KEY", "ya29.", "eyJ"] { #expect(!logs.contains(secret), "the log holds \(secret)") }
                for name in ["hearth.sqlite", "hearth.sqlite-wal"] {
                    guard let file = FileManager.default.contents(atPath: server.dataDirectory + "/" + name) else { continue }
                    for row in rows { #expect(file.range(of: Data(row.token.utf8)) == nil, "\(name) holds the token of \(row.name)") }
                }

                let metrics = try await client.get("/metrics").text
                let dropped = rows.filter { $0.fate == .dropped }.count
                #expect(metrics.contains("hearth_push_dropped_tokens_total \(dropped)"))
                #expect(metrics.contains("hearth_push_dead_total \(rows.filter { if case .dead = $0.fate { true } else { false } }.count)"))
                #expect(metrics.contains("hearth_push_sent_total \(rows.filter { if case .delivered = $0.fate { true } else { false } }.count)"))
            }
        }
    }

    /// What reaches each service is what it documents: APNs over HTTP/2 with the topic, push type and
    /// priority, `aps.alert` and the data beside it, or a background notification for data alone; FCM's
    /// v1 message with the notification and the data as strings.
    @Test func theRequestsAreWhatEachServiceDocuments() async throws {
        try await Self.withRig { rig in
            try await TestServer.with(configure: rig.configure(try rig.settings())) { _, client in
                let user = try await client.signedUp("ann@example.com", Self.password)
                let (apnsToken, fcmToken) = (Self.apnsToken(), Self.fcmToken())
                _ = try await Self.register(client, user, token: apnsToken, platform: "apns")
                _ = try await Self.register(client, user, token: fcmToken, platform: "fcm")
                let sent = try await Self.send(client, to: "uid", user.uid, title: "Hi Ann")
                #expect(sent.status == 202)
                if case .array(let ids)? = sent.json?["queued"] { #expect(ids.count == 2) } else { Issue.record("no queued ids") }
                let dataOnly = try await client.post("/v1/push/send", #"{"to": {"uid": "\#(user.uid)"}, "data": {"sync": "now"}}"#)
                #expect(dataOnly.status == 202)
                try await Self.eventually("four deliveries") { rig.apns.received.count == 2 && rig.fcm.received.count == 2 }

                // The two sends are delivered concurrently, in either order.
                let alert = try #require(rig.apns.received.first { $0.headers["apns-push-type"] == "alert" })
                #expect(alert.version == "HTTP/2.0")
                #expect(alert.status == 200)
                #expect(alert.headers["apns-topic"] == PushTestCredentials.apnsTopic)
                #expect(alert.headers["apns-push-type"] == "alert")
                #expect(alert.headers["apns-priority"] == "10")
                #expect(alert.body["aps"]?["alert"]?["title"] == .string("Hi Ann"))
                #expect(alert.body["letter"] == .string("42"))
                let background = try #require(rig.apns.received.first { $0.headers["apns-push-type"] == "background" })
                #expect(background.headers["apns-priority"] == "5")
                #expect(background.body["aps"]?["content-available"] == .int(1))
                #expect(background.body["sync"] == .string("now"))

                let message = try #require(rig.fcm.received.first { $0.message["notification"] != nil }?.message)
                #expect(message["notification"]?["title"] == .string("Hi Ann"))
                #expect(message["data"]?["letter"] == .string("42"))
                let dataMessage = try #require(rig.fcm.received.first { $0.message["notification"] == nil }?.message)
                #expect(dataMessage["data"]?["sync"] == .string("now"))
            }
        }
    }

    /// A provider token signed with a key APNs does not know is refused (403 InvalidProviderToken), and the
    /// notification is dead with that reason; a service account key FCM does not know gets no access token.
    @Test func credentialsTheServicesDoNotKnowAreDeadWithTheirReason() async throws {
        try await Self.withRig { rig in
            // Keys of another team and another service account, with the same ids: signatures that do not verify.
            let strangers = try PushTestCredentials.make(in: TestFolders.make(), tokenURI: rig.fcm.tokenURI)
            let settings = try rig.settings(keys: strangers)
            try await TestServer.with(configure: rig.configure(settings)) { _, client in
                let user = try await client.signedUp("ann@example.com", Self.password)
                _ = try await Self.register(client, user, token: Self.apnsToken(), platform: "apns")
                _ = try await Self.register(client, user, token: Self.fcmToken(), platform: "fcm")
                #expect(try await Self.send(client, to: "uid", user.uid).status == 202)
                try await Self.eventually("both dead") { try await Self.queue(client).dead.count == 2 }
                let reasons = try await Self.queue(client).dead.compactMap { $0["lastError"]?.stringValue }
                #expect(reasons.contains { $0.contains("APNs answered 403 InvalidProviderToken") }, "\(reasons)")
                #expect(reasons.contains { $0.contains("token endpoint answered 400 invalid_grant") }, "\(reasons)")
                #expect(rig.apns.received.allSatisfy { $0.status == 403 })
            }
        }
    }
}
