import Foundation
import HearthCore
import HearthFunctions
import HearthMail
import HearthServer
import HearthTesting
import Logging
import ServiceLifecycle
import Testing
@testable import blue_avalanche_functions

/// Blue Avalanche's functions end to end: Hearth with the app's rules and fixtures and the example's
/// functions file, on a clock the test moves; the example's handlers served by a `FunctionsServer`; fake
/// social networks recording each post; the APNs and FCM test servers receiving the reminders.
@Suite(.serialized) struct BlueAvalancheFunctionsTests {
    /// The social networks' API as the functions call it, `POST /<network>/posts`: keeps each post it takes by
    /// network and `Idempotency-Key` (a repeated key is answered as before and not posted again), and
    /// answers 503 to a post's requests while the test makes a network fail for it.
    final class FakeNetworks: @unchecked Sendable {  // its state is only touched under `lock`
        struct Request {
            var network: String
            var key: String
            var authorization: String
            var body: JSON
            var status: Int
            var post: String { body["post"]?.stringValue ?? "" }
        }

        private let lock = NSLock()
        private var requests: [Request] = []
        private var taken: Set<String> = []
        private var failing: Set<String> = []
        private var endpoint: TestHTTPEndpoint?

        var url: String { "http://127.0.0.1:\(endpoint?.port ?? 0)" }

        static func start() async throws -> FakeNetworks {
            let networks = FakeNetworks()
            networks.endpoint = try await TestHTTPEndpoint.start { networks.answer($0) }
            return networks
        }

        func stop() async { await endpoint?.stop() }

        /// Makes `network` answer 503 to the post's requests until `recover`.
        func fail(_ network: String, for post: String) { _ = lock.withLock { failing.insert("\(network) \(post)") } }
        func recover(_ network: String, for post: String) { _ = lock.withLock { failing.remove("\(network) \(post)") } }

        /// The requests about a post, in order.
        func requests(for post: String) -> [Request] { lock.withLock { requests.filter { $0.post == post } } }

        /// The posts a network took (answered 201) for a post.
        func published(_ post: String) -> [Request] { requests(for: post).filter { $0.status == 201 } }

        func answer(_ request: TestHTTPEndpoint.Request) -> TestHTTPEndpoint.Answer {
            let parts = request.path.split(separator: "/").map(String.init)
            guard request.method == "POST", parts.count == 2, parts[1] == "posts",
                  request.headers["content-type"] == "application/json", let body = try? JSON.parse(request.body),
                  let key = request.headers["idempotency-key"] else {
                return .init(status: 400, body: Array(#"{"error": "a JSON POST to /<network>/posts with an Idempotency-Key"}"#.utf8))
            }
            let network = parts[0]
            return lock.withLock {
                var recorded = Request(network: network, key: key, authorization: request.headers["authorization"] ?? "", body: body, status: 201)
                if failing.contains("\(network) \(recorded.post)") {
                    recorded.status = 503
                } else if !taken.insert("\(network) \(key)").inserted {
                    recorded.status = 200  // the same key again: the post it made before, not a new one
                }
                requests.append(recorded)
                return .init(status: recorded.status, headers: ["content-type": "application/json"],
                             body: Array(#"{"id": "\#(network)-\#(key)"}"#.utf8))
            }
        }
    }

    /// Everything a test runs against.
    struct Rig {
        let hearth: Harness
        let networks: FakeNetworks
        let clock: ManualClock
        let apns: APNsTestServer
        let fcm: FCMTestServer

        var admin: HearthClient { hearth.client() }

        /// Writes a post of `author`'s through the API, as the app does; answers its path.
        func compose(_ author: HearthClient, _ uid: String, networks: [String], at time: Timestamp) async throws -> String {
            let created = try await author.post("/v1/docs/posts", """
                {"author": "\(uid)", "content": "Open house Saturday, 11 to 2", "networks": \(JSON.array(networks.map(JSON.string)).text),
                 "scheduledAt": {"$timestamp": "\(time.rfc3339)"}, "status": "scheduled",
                 "createdAt": {"$serverTimestamp": true}, "updatedAt": {"$serverTimestamp": true}}
                """)
            guard created.status == 200 || created.status == 201, let path = created.json?["path"]?.stringValue else {
                throw ExpectationFailure("the post was refused: \(created.status) \(created.text)")
            }
            return path
        }

        /// The post's data as the admin reads it (nil once deleted).
        func post(_ path: String) async throws -> JSON? { try await admin.get("/v1/docs/\(path)").json?["data"] }

        /// Waits until the post's status is `status`.
        func waitForStatus(_ path: String, _ status: String) async throws -> JSON {
            try await Self.eventually("\(path) to be \(status)") {
                let data = try await post(path)
                return data?["status"]?.stringValue == status ? data : nil
            }
        }

        /// Waits (generously) until `value` answers something.
        static func eventually<T>(_ what: String, _ value: () async throws -> T?) async throws -> T {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if let found = try await value() { return found }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw ExpectationFailure("timed out waiting for \(what)")
        }

        /// The timer armed for a post, as Hearth keeps it.
        func timer(_ path: String) async throws -> Timestamp? {
            guard let database = hearth.database else { throw ExpectationFailure("the harness runs in process") }
            return try await database.functionTimer("publishPost", path)
        }
    }

    static let publishing = "publishPost"

    /// Runs `body` with Hearth (the app's rules, fixtures and indexes, the example's functions file, push to
    /// the test servers) on a clock starting at `start`, and the example's handlers served on loopback.
    static func withRig(start: Timestamp = .now(), _ body: (Rig) async throws -> Void) async throws {
        let networks = try await FakeNetworks.start()
        let fcm = try await FCMTestServer.start()
        let credentials = try PushTestCredentials.make(in: TestFolders.make(), tokenURI: fcm.tokenURI)
        fcm.trust(credentials)
        let apns = try await APNsTestServer.start(trusting: credentials)
        var apnsSettings = try APNsSettings(keyFile: credentials.apnsKeyFile, keyID: PushTestCredentials.apnsKeyID,
                                            teamID: PushTestCredentials.apnsTeamID, topic: PushTestCredentials.apnsTopic, url: apns.url)
        try apnsSettings.trust(caFile: apns.certificate.certificate)
        let push = PushSettings(apns: apnsSettings, fcm: try FCMSettings(credentialsFile: credentials.fcmCredentialsFile, url: fcm.url))

        // The example's own functions file, pointed at the service this test runs, with a secret of its own.
        let secret = FunctionsEndToEndTests.secret()
        let port = try LoopbackPort.unused()
        let example = try String(contentsOfFile: Harness.projectFile("examples/BlueAvalancheFunctions/functions.json"), encoding: .utf8)
        let file = TestFolders.make() + "/functions.json"
        try example.replacingOccurrences(of: "http://127.0.0.1:9000/hooks", with: "http://127.0.0.1:\(port)/hooks")
            .replacingOccurrences(of: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqr", with: secret)
            .write(toFile: file, atomically: true, encoding: .utf8)

        let clock = ManualClock(start)
        let hearth = try await Harness.start(rules: "rules/blue-avalanche.rules", fixtures: "fixtures/blue-avalanche.json",
                                             indexes: "indexes/blue-avalanche.json") { configuration in
            configuration.useFunctions(file: file)
            configuration.functionsClock = clock.function
            configuration.push = push
            configuration.outboxInterval = .milliseconds(20)
        }
        let settings = BlueAvalancheSettings(hearthURL: URL(string: "http://127.0.0.1:\(hearth.port)")!,
                                             networksURL: URL(string: networks.url)!)
        let server = try FunctionsServer(secret: secret, path: "/hooks", functions: BlueAvalancheHandlers.functions(settings))
        var logger = Logger(label: "blue-avalanche-functions-test")
        logger.logLevel = .warning
        let group = ServiceGroup(configuration: .init(services: [server.application(port: port, logger: logger)], logger: logger))
        let running = Task { try await group.run() }
        let rig = Rig(hearth: hearth, networks: networks, clock: clock, apns: apns, fcm: fcm)
        func stop() async {
            await group.triggerGracefulShutdown()
            _ = await running.result
            await hearth.stop()
            await networks.stop()
            await apns.stop()
            await fcm.stop()
        }
        do {
            try await body(rig)
            await stop()
        } catch {
            await stop()
            throw error
        }
    }

    static func later(_ seconds: Int64, than time: Timestamp = .now()) -> Timestamp {
        Timestamp(microseconds: time.microseconds + seconds * 1_000_000)
    }

    /// maria's tokens on the networks, as the fixture connects them.
    static let mariasTokens = ["twitter": "Bearer tw_H9FYlS0RfhPukF1KHcsp8AskSia22pYjx3NIkr5F",
                               "instagram": "Bearer in_orGeEn3nBFfSMnMBplO1POnas63ZsHgUONwJGJXT"]

    @Test func aPostGoesToEachNetworkOnceAtItsTimeAndIsMarkedPublished() async throws {
        try await Self.withRig { rig in
            let (maria, _) = try await rig.hearth.signIn("maria")
            let due = Self.later(3600)
            let path = try await rig.compose(maria, "maria", networks: ["twitter", "instagram"], at: due)
            #expect(try await rig.timer(path) == due)
            rig.clock.advance(seconds: 2 * 3600)
            let data = try await rig.waitForStatus(path, "published")
            #expect(data["publishedTo"] == .array([.string("twitter"), .string("instagram")]))
            #expect(data["publishedAt"]?["$timestamp"]?.stringValue != nil, "\(data)")
            let requests = rig.networks.requests(for: path)
            #expect(requests.map(\.network) == ["twitter", "instagram"] && requests.allSatisfy { $0.status == 201 }, "\(requests)")
            for request in requests {
                #expect(request.authorization == Self.mariasTokens[request.network])
                #expect(request.body["content"]?.stringValue == "Open house Saturday, 11 to 2")
                #expect(request.key.hasPrefix("evt_") && request.key == requests[0].key)
            }
            #expect(requests.first { $0.network == "twitter" }?.body["handle"]?.stringValue == "@marialopezhomes")
            #expect(try await rig.timer(path) == nil)
            // The author can no longer edit it: the rules keep a published post as it went out.
            #expect(try await maria.patch("/v1/docs/\(path)", #"{"content": "Changed", "updatedAt": {"$serverTimestamp": true}}"#).status == 403)
        }
    }

    @Test func aRescheduledPostGoesOutAtItsNewTimeOnly() async throws {
        try await Self.withRig { rig in
            let (maria, _) = try await rig.hearth.signIn("maria")
            let first = Self.later(3600)
            let path = try await rig.compose(maria, "maria", networks: ["twitter"], at: first)
            let moved = Self.later(3 * 3600)
            #expect(try await maria.patch("/v1/docs/\(path)", """
                {"scheduledAt": {"$timestamp": "\(moved.rfc3339)"}, "updatedAt": {"$serverTimestamp": true}}
                """).status == 200)
            #expect(try await rig.timer(path) == moved)
            // Past the first time: another post due then goes out, this one does not.
            let other = try await rig.compose(maria, "maria", networks: ["twitter"], at: Self.later(5400))
            rig.clock.advance(seconds: 2 * 3600)
            _ = try await rig.waitForStatus(other, "published")
            #expect(rig.networks.requests(for: path).isEmpty)
            #expect(try await rig.post(path)?["status"]?.stringValue == "scheduled")
            rig.clock.advance(seconds: 2 * 3600)
            _ = try await rig.waitForStatus(path, "published")
            #expect(rig.networks.requests(for: path).map(\.status) == [201])
        }
    }

    @Test func aDeletedPostNeverGoesOut() async throws {
        try await Self.withRig { rig in
            let (maria, _) = try await rig.hearth.signIn("maria")
            let path = try await rig.compose(maria, "maria", networks: ["twitter", "instagram"], at: Self.later(3600))
            #expect(try await maria.delete("/v1/docs/\(path)").status == 204)
            #expect(try await rig.timer(path) == nil)
            let other = try await rig.compose(maria, "maria", networks: ["twitter"], at: Self.later(5400))
            rig.clock.advance(seconds: 2 * 3600)
            _ = try await rig.waitForStatus(other, "published")
            #expect(rig.networks.requests(for: path).isEmpty)
            #expect(try await rig.post(path) == nil)
            let dead = try await rig.admin.get("/v1/functions/events?state=dead").json?["events"]
            #expect(dead == .array([]), "\(String(describing: dead))")
        }
    }

    @Test func aFailingNetworkDelaysThePostWhichGoesOutOnceEverywhereWhenItRecovers() async throws {
        try await Self.withRig { rig in
            let (maria, _) = try await rig.hearth.signIn("maria")
            let path = try await rig.compose(maria, "maria", networks: ["twitter", "instagram"], at: Self.later(3600))
            rig.networks.fail("instagram", for: path)
            rig.clock.advance(seconds: 2 * 3600)
            // Twitter took the post at the first attempt; Instagram refuses it, so the event is delivered again.
            _ = try await Rig.eventually("a third attempt") {
                rig.networks.requests(for: path).filter { $0.network == "instagram" }.count >= 3 ? true : nil
            }
            #expect(try await rig.post(path)?["status"]?.stringValue == "scheduled")
            let pending = try await rig.admin.functionEvents("pending") { events in
                events.contains { $0["event"]?["name"]?.stringValue == Self.publishing }
            }
            let event = try #require(pending.first { $0["event"]?["name"]?.stringValue == Self.publishing })
            #expect(event["lastError"]?.stringValue?.contains("instagram answered 503") == true, "\(event)")
            rig.networks.recover("instagram", for: path)
            _ = try await rig.waitForStatus(path, "published")
            let requests = rig.networks.requests(for: path)
            // Every attempt sent the same key: each network made the post once, and answered the repeats as such.
            #expect(Set(requests.map(\.key)).count == 1)
            #expect(rig.networks.published(path).map(\.network).sorted() == ["instagram", "twitter"], "\(requests)")
            #expect(requests.filter { $0.network == "twitter" }.map(\.status).dropFirst().allSatisfy { $0 == 200 })
            #expect(try await rig.admin.get("/v1/functions/events?state=dead").json?["events"] == .array([]))
        }
    }

    /// Waits until the server's clock service has taken up the reminder's schedule (it counts from then).
    static func waitForSchedule(_ rig: Rig) async throws {
        guard let database = rig.hearth.database else { throw ExpectationFailure("the harness runs in process") }
        _ = try await Rig.eventually("the dailyReminder schedule to start") {
            try await database.functionSchedule("dailyReminder") == nil ? nil : true
        }
    }

    /// Waits until the reminder's run is acknowledged and every push it queued has left Hearth's queue.
    static func waitForReminders(_ rig: Rig) async throws {
        _ = try await Rig.eventually("the reminder run and its pushes") { () async throws -> Bool? in
            let events = try await rig.admin.get("/v1/functions/events?state=pending").json?["events"]
            guard case .array(let pending)? = events, !pending.contains(where: { $0["event"]?["name"]?.stringValue == "dailyReminder" }) else { return nil }
            guard case .array(let queued)? = try await rig.admin.get("/v1/admin/push").json?["pending"], queued.isEmpty else { return nil }
            return true
        }
    }

    /// The reminder on a day of the fixture's users: priya (Kolkata, 10:00), james (London, 07:00) and maria
    /// (Chicago, 08:00) each get a push at their own hour, on their own device, and no one else; tom asked for none.
    @Test func theDailyReminderReachesEachUserAtTheirLocalHourOnly() async throws {
        try await Self.withRig(start: .at("2026-11-27T04:20:00Z")) { rig in
            try await Self.waitForSchedule(rig)
            var devices: [String: String] = [:]
            for (uid, platform) in [("maria", "apns"), ("james", "fcm"), ("priya", "apns"), ("tom", "fcm")] {
                let (user, _) = try await rig.hearth.signIn(uid)
                let token = platform == "apns" ? (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
                                               : "fcm-\(makeAutoID()):APA91b\(makeAutoID())\(makeAutoID())"
                let registered = try await user.post("/v1/push/devices", #"{"token": "\#(token)", "platform": "\#(platform)"}"#)
                #expect(registered.status == 201, "\(uid): \(registered.text)")
                devices[uid] = token
            }
            func reminded() -> [String] {
                let tokens = rig.apns.received.filter { $0.status == 200 }.map(\.token) + rig.fcm.received.filter { $0.status == 200 }.map(\.token)
                return tokens.map { token in devices.first { $0.value == token }?.key ?? token }.sorted()
            }
            for (advance, expected) in [(15 * 60, ["priya"]),                    // 04:35Z: the 04:30 run, 10:00 in Kolkata
                                        (150 * 60, ["james", "priya"]),          // 07:05Z: the 07:00 run (the missed ones fire once)
                                        (7 * 3600, ["james", "maria", "priya"])] // 14:05Z: the 14:00 run, 08:00 in Chicago
            {
                rig.clock.advance(seconds: Int64(advance))
                _ = try await Rig.eventually("\(expected) reminded") { reminded().count >= expected.count ? true : nil }
                try await Self.waitForReminders(rig)
                #expect(reminded() == expected)
            }
            let alert = try #require(rig.apns.received.first { $0.token == devices["maria"] })
            #expect(alert.body["aps"]?["alert"]?["title"]?.stringValue == "Time to post", "\(alert.body)")
            #expect(alert.body["kind"]?.stringValue == "dailyReminder", "\(alert.body)")
        }
    }
}
