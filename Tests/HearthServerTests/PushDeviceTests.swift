import Foundation
import HearthCore
import HearthServer
import HearthTesting
import HTTPTypes
import Testing

/// The push endpoints' rules and refusals, and topics, restarts and broken settings.
@Suite(.serialized) struct PushDeviceTests {
    static let password = "correct horse battery"

    /// Who may do what: registering needs a signed-in user (the admin key has no devices), sending needs the
    /// admin, a device of another user is not found (and stays), and a user with no devices is an answer.
    @Test func whoMayRegisterDeleteAndSend() async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { _, client in
            let ann = try await client.signedUp("ann@example.com", Self.password)
            let bob = try await client.signedUp("bob@example.com", Self.password)
            let body = #"{"token": "\#(PushDeliveryTests.apnsToken())", "platform": "apns"}"#
            let nobody = try await client.post("/v1/push/devices", body, as: .nobody)
            #expect(nobody.status == 401)
            let admin = try await client.post("/v1/push/devices", body)
            #expect(admin.status == 403)
            let created = try await client.post("/v1/push/devices", body, as: .token(ann.token))
            #expect(created.status == 201)
            let id = try #require(created.json?["id"]?.stringValue)
            #expect(created.json?["token"] == nil, "the token is never shown")
            let again = try await client.post("/v1/push/devices", body, as: .token(ann.token))
            #expect(again.status == 200 && again.json?["id"]?.stringValue == id, "registering again is the same device")

            let bobDeletes = try await client.delete("/v1/push/devices/\(id)", as: .token(bob.token))
            #expect(bobDeletes.status == 404)
            let bobSubscribes = try await client.post("/v1/push/topics/news", #"{"device": "\#(id)"}"#, as: .token(bob.token))
            #expect(bobSubscribes.status == 404)
            #expect(try await PushDeliveryTests.deviceIDs(client, ann) == [id])

            let userSends = try await client.post("/v1/push/send", #"{"to": {"uid": "\#(bob.uid)"}, "data": {"a": "b"}}"#, as: .token(ann.token))
            #expect(userSends.status == 403)
            let noDevices = try await PushDeliveryTests.send(client, to: "uid", bob.uid)
            #expect(noDevices.status == 200)
            #expect(noDevices.json?["queued"] == .array([]))
            let noSubscribers = try await PushDeliveryTests.send(client, to: "topic", "nobody-listens")
            #expect(noSubscribers.status == 200 && noSubscribers.json?["queued"] == .array([]))
            let unknownDevice = try await PushDeliveryTests.send(client, to: "device", "nope")
            #expect(unknownDevice.status == 404)

            let deleted = try await client.delete("/v1/push/devices/\(id)", as: .token(ann.token))
            #expect(deleted.status == 204)
            #expect(try await PushDeliveryTests.deviceIDs(client, ann).isEmpty)

            // Deleting an account deletes its devices.
            let bobDevice = try await PushDeliveryTests.register(client, bob, token: PushDeliveryTests.fcmToken(), platform: "fcm")
            #expect(try await client.delete("/v1/admin/users/\(bob.uid)").status == 204)
            #expect(try await PushDeliveryTests.send(client, to: "device", bobDevice).status == 404)
        }
    }

    struct BadInput: Sendable {
        let path: String
        let body: String
        let status: Int
        let message: String
    }

    static let badRegistrations: [BadInput] = [
        .init(path: "/v1/push/devices", body: #"{"platform": "apns"}"#, status: 400, message: "token:"),
        .init(path: "/v1/push/devices", body: #"{"token": "", "platform": "apns"}"#, status: 400, message: "token:"),
        .init(path: "/v1/push/devices", body: #"{"token": "abc/def", "platform": "apns"}"#, status: 400, message: "token: not a device token"),
        .init(path: "/v1/push/devices", body: #"{"token": "abc", "platform": "gcm"}"#, status: 400, message: "platform:"),
        .init(path: "/v1/push/devices", body: #"{"token": "abc", "platform": "fcm", "topics": ["a b"]}"#, status: 400, message: "topics[0]"),
        .init(path: "/v1/push/devices", body: #"{"token": "abc", "platform": "fcm", "topics": "news"}"#, status: 400, message: "topics:"),
        .init(path: "/v1/push/devices", body: #"{"token": "abc", "platform": "fcm", "model": "x"}"#, status: 400, message: "unknown field 'model'"),
        .init(path: "/v1/push/devices", body: #"[]"#, status: 400, message: "JSON object"),
    ]

    static let badSends: [BadInput] = [
        .init(path: "/v1/push/send", body: #"{"data": {"a": "b"}}"#, status: 400, message: "to:"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u", "topic": "t"}, "data": {"a": "b"}}"#, status: 400, message: "exactly one"),
        .init(path: "/v1/push/send", body: #"{"to": {"email": "a@b.c"}, "data": {"a": "b"}}"#, status: 400, message: "unknown recipient kind 'email'"),
        .init(path: "/v1/push/send", body: #"{"to": {"topic": "a/b"}, "data": {"a": "b"}}"#, status: 400, message: "to.topic"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}}"#, status: 400, message: "a notification, data or both"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}, "notification": {}}"#, status: 400, message: "notification:"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}, "notification": {"title": 3}}"#, status: 400, message: "notification.title"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}, "notification": {"image": "x"}}"#, status: 400, message: "unknown field 'image'"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}, "data": {"n": 1}}"#, status: 400, message: "data.n: a string"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}, "data": {"from": "x"}}"#, status: 400, message: "reserved"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}, "data": {"google.x": "x"}}"#, status: 400, message: "reserved"),
        .init(path: "/v1/push/send", body: #"{"to": {"uid": "u"}, "data": {"big": "\#(String(repeating: "x", count: 5000))"}}"#,
              status: 413, message: "at most 4096"),
    ]

    /// Each refusal names what was wrong, with its status, and stores nothing.
    @Test(arguments: badRegistrations + badSends)
    func badInputIsRefusedNamingTheField(_ row: BadInput) async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { _, client in
            let ann = try await client.signedUp("ann@example.com", Self.password)
            let caller: Caller = row.path == "/v1/push/send" ? .admin : .token(ann.token)
            let answer = try await client.post(row.path, row.body, as: caller)
            #expect(answer.status == row.status, "\(row.body.prefix(80)): \(answer.text)")
            #expect(answer.errorMessage?.contains(row.message) == true, "\(row.body.prefix(80)): \(answer.text)")
            #expect(!answer.text.contains("abc/def"), "a refused token is not echoed")
            #expect(try await PushDeliveryTests.deviceIDs(client, ann).isEmpty)
            #expect(try await PushDeliveryTests.queue(client).pending.isEmpty)
        }
    }

    /// A topic reaches every subscribed device whatever its platform and owner, and no other; after an
    /// unsubscribe it no longer reaches that device.
    @Test func topicsFanOutToEverySubscribedDevice() async throws {
        try await PushDeliveryTests.withRig { rig in
            try await TestServer.with(configure: rig.configure(try rig.settings())) { _, client in
                let ann = try await client.signedUp("ann@example.com", Self.password)
                let bob = try await client.signedUp("bob@example.com", Self.password)
                let (annToken, bobToken, quietToken) = (PushDeliveryTests.apnsToken(), PushDeliveryTests.fcmToken(), PushDeliveryTests.apnsToken())
                let annDevice = try await PushDeliveryTests.register(client, ann, token: annToken, platform: "apns", topics: ["news"])
                let bobDevice = try await PushDeliveryTests.register(client, bob, token: bobToken, platform: "fcm")
                _ = try await PushDeliveryTests.register(client, bob, token: quietToken, platform: "apns")
                let subscribed = try await client.post("/v1/push/topics/news", #"{"device": "\#(bobDevice)"}"#, as: .token(bob.token))
                #expect(subscribed.status == 200 && subscribed.json?["topics"] == .array([.string("news")]))

                let first = try await PushDeliveryTests.send(client, to: "topic", "news")
                #expect(first.status == 202)
                try await PushDeliveryTests.eventually("both subscribers") { rig.apns.received.count == 1 && rig.fcm.received.count == 1 }
                #expect(rig.apns.received.map(\.token) == [annToken])
                #expect(rig.fcm.received.map(\.token) == [bobToken])

                let left = try await client.request(.delete, "/v1/push/topics/news", json: #"{"device": "\#(annDevice)"}"#,
                                                    as: .token(ann.token))
                #expect(left.status == 200 && left.json?["topics"] == .array([]))
                _ = try await PushDeliveryTests.send(client, to: "topic", "news")
                try await PushDeliveryTests.eventually("bob's second") { rig.fcm.received.count == 2 }
                try await PushDeliveryTests.eventually("the queue empty") { try await PushDeliveryTests.queue(client).pending.isEmpty }
                #expect(rig.apns.received.count == 1, "ann unsubscribed")
            }
        }
    }

    /// A send acknowledged while APNs is unreachable survives a SIGKILL of `hearth serve` and is delivered
    /// after the restart, to the token registered before it (opened with the data folder's key).
    @Test func queuedNotificationsSurviveSIGKILL() async throws {
        try await PushDeliveryTests.withRig { rig in
            let folder = TestFolders.make()
            let unreachable = try UnreachablePort()
            func arguments(_ url: String) -> [String] {
                ["--apns-key", rig.credentials.apnsKeyFile, "--apns-key-id", PushTestCredentials.apnsKeyID,
                 "--apns-team-id", PushTestCredentials.apnsTeamID, "--apns-topic", PushTestCredentials.apnsTopic,
                 "--apns-url", url, "--apns-ca-file", rig.apns.certificate.certificate]
            }
            let first = try await ServerProcess.start(dataDirectory: folder, arguments: arguments("https://127.0.0.1:\(unreachable.port)"))
            let client = first.client()
            let ann = try await client.signedUp("ann@example.com", Self.password)
            let token = PushDeliveryTests.apnsToken()
            _ = try await PushDeliveryTests.register(client, ann, token: token, platform: "apns")
            #expect(try await PushDeliveryTests.send(client, to: "uid", ann.uid).status == 202)
            first.signal(SIGKILL)
            _ = try await first.waitForExit()
            await client.close()

            let second = try await ServerProcess.start(dataDirectory: folder, arguments: arguments(rig.apns.url))
            let again = second.client()
            // Generous: had an attempt failed before the kill, the next comes after the policy's 30 s.
            let deadline = Date().addingTimeInterval(120)
            while !rig.apns.received.contains(where: { $0.token == token && $0.status == 200 }) && Date() < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(rig.apns.received.contains { $0.token == token && $0.status == 200 }, "delivered after the restart")
            try await PushDeliveryTests.eventually("the queue empty") { try await PushDeliveryTests.queue(again).pending.isEmpty }
            #expect(!second.outputText.contains(token), "the server's output names the token")
            await again.close()
            second.signal(SIGTERM)
            _ = try await second.waitForExit()
        }
    }

    struct BrokenSetting: Sendable {
        let name: String
        let write: String?
        let apns: Bool
        let message: String
    }

    static let brokenSettings: [BrokenSetting] = [
        .init(name: "missing APNs key", write: nil, apns: true, message: "apnsKey: cannot read"),
        .init(name: "APNs key not PEM", write: "hello", apns: true, message: "is not a P-256 private key"),
        .init(name: "APNs key of another curve", write: "P384", apns: true, message: "is not a P-256 private key"),
        .init(name: "missing credentials", write: nil, apns: false, message: "fcmCredentials: cannot read"),
        .init(name: "credentials not JSON", write: "{not json", apns: false, message: "is not JSON"),
        .init(name: "credentials of another type", write: #"{"type": "authorized_user"}"#, apns: false, message: "is not a service account key"),
        .init(name: "credentials without a key", write: #"{"type": "service_account", "project_id": "p", "client_email": "a@b"}"#,
              apns: false, message: "has no 'private_key'"),
        .init(name: "credentials with a broken key",
              write: #"{"type": "service_account", "project_id": "p", "client_email": "a@b", "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "token_uri": "https://oauth2.googleapis.com/token"}"#,
              apns: false, message: "is not an RSA private key"),
    ]

    /// A key or credentials file that does not load is an error at start, naming the setting and the file.
    @Test(arguments: brokenSettings)
    func brokenPushSettingsAreRefusedAtStart(_ row: BrokenSetting) throws {
        let file = TestFolders.make() + "-push-setting"
        if let write = row.write {
            let text = write == "P384" ? PushTestCredentials.p384KeyPEM() : write
            try text.write(toFile: file, atomically: true, encoding: .utf8)
        }
        do throws(HearthError) {
            if row.apns {
                _ = try APNsSettings(keyFile: file, keyID: "K", teamID: "T", topic: "com.example")
            } else {
                _ = try FCMSettings(credentialsFile: file)
            }
            Issue.record("\(row.name): accepted")
        } catch {
            #expect(error.message.contains(row.message), "\(row.name): \(error.message)")
            if row.write == nil { #expect(error.message.contains(file)) }
        }
    }

    /// `hearth serve` stops at start on a key that does not load, with the message.
    @Test func hearthServeRefusesABrokenAPNsKey() async throws {
        let folder = TestFolders.make()
        let result = try await HearthCLI.run(["serve", "--data", folder, "--port", "0", "--apns-key", folder + "/nope.p8",
                                              "--apns-key-id", "K", "--apns-team-id", "T", "--apns-topic", "com.example"])
        #expect(result.status != 0)
        #expect(result.output.contains("apnsKey: cannot read \(folder)/nope.p8"), "\(result.output)")
    }
}
