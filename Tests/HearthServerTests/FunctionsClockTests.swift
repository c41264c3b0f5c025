import Foundation
import HearthCore
import HearthEngine
import HearthServer
import HearthTesting
import Testing

/// Timers and schedules fired by a real server on a clock the test moves, delivered to a real Standard
/// Webhooks receiver (`Tests/peers/webhook_receiver.py`, which verifies each signature). The shape the seed
/// apps' functions take: publish a post at its `publishAt`, and a daily reminder at 09:00 Paris time.
@Suite(.serialized) struct FunctionsClockTests {
    static func functionsFile(url: String, secret: String) throws -> String {
        let path = TestFolders.make() + "/functions.json"
        try """
            {"endpoints": {"app": {"url": "\(url)", "secret": "\(secret)"}},
             "schedules": [{"name": "dailyReminder", "cron": "0 9 * * *", "timeZone": "Europe/Paris", "endpoint": "app"}],
             "timers": [{"name": "publishPost", "path": "posts/{postId}", "field": "publishAt", "endpoint": "app"}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Waits until the server's clock service has seen the schedule (it starts from the clock's time then).
    static func waitForSchedule(_ server: TestServer, _ name: String) async throws {
        let deadline = Date().addingTimeInterval(60)
        while try await server.services.database.functionSchedule(name) == nil {
            guard Date() < deadline else { throw ExpectationFailure("the schedule \(name) was never run") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func aTimerAndAScheduleFireWhenTheTestMovesTheClock() async throws {
        let secret = FunctionsDeliveryTests.secret()
        try await WebhookTestReceiver.with(secret: secret) { receiver in
            // Handlers answer with writes: publishing the post is the timer's answer.
            try receiver.answer([.init(body: #"{"writes": [{"update": "posts/p1", "data": {"published": true}}]}"#)],
                                then: .init(status: 204))
            let clock = ManualClock(.at("2026-11-26T07:30:00Z"))  // 08:30 in Paris
            let file = try Self.functionsFile(url: receiver.url, secret: secret)
            try await TestServer.with(configure: { configuration in
                configuration.functionsFile = file
                configuration.functionsClock = clock.function
            }) { server, client in
                try await Self.waitForSchedule(server, "dailyReminder")
                #expect(try await client.put("/v1/docs/posts/p1", #"{"title": "Hello", "publishAt": {"$timestamp": "2026-11-26T07:45:00Z"}}"#).status == 200)
                #expect(try await client.get("/metrics").text.contains("hearth_function_timers_pending 1"))
                clock.advance(seconds: 20 * 60)  // 07:50Z: the post's time has passed, the reminder's (08:00Z) not yet
                let first = try await receiver.waitForRequests(1)
                #expect(first[0].verified, "\(first[0].error ?? "")")
                #expect(first[0].json["type"]?.stringValue == "timer")
                #expect(first[0].json["name"]?.stringValue == "publishPost")
                #expect(first[0].json["time"]?.stringValue == "2026-11-26T07:45:00.000000Z")
                #expect(first[0].json["params"] == .object([("postId", .string("p1"))]))
                #expect(first[0].json["document"]?["after"]?["data"]?["title"]?.stringValue == "Hello")
                _ = try await client.functionEvents("pending") { $0.isEmpty }
                #expect(try await client.get("/v1/docs/posts/p1").json?["data"]?["published"] == .bool(true))
                clock.advance(seconds: 3 * 86_400)  // three days later (29 Nov 08:50 Paris), past three 09:00s: one reminder, for the 28th
                let all = try await receiver.waitForRequests(2)
                #expect(all[1].verified, "\(all[1].error ?? "")")
                #expect(all[1].json["type"]?.stringValue == "schedule")
                #expect(all[1].json["schedule"] == .object([("name", .string("dailyReminder")),
                                                            ("scheduledTime", .string("2026-11-28T08:00:00.000000Z"))]))
                _ = try await client.functionEvents("pending") { $0.isEmpty }
                #expect(receiver.received().count == 2)
                let metrics = try await client.get("/metrics").text
                #expect(metrics.contains("hearth_function_timers_pending 0"))
                #expect(metrics.contains("hearth_function_timers_fired_total 1"))
                #expect(metrics.contains("hearth_function_schedule_runs_total 1"))
            }
        }
    }

    @Test func aTimerPendingAcrossARestartFiresAfterIt() async throws {
        let secret = FunctionsDeliveryTests.secret()
        try await WebhookTestReceiver.with(secret: secret) { receiver in
            let clock = ManualClock(.at("2026-11-26T07:30:00Z"))
            let file = try Self.functionsFile(url: receiver.url, secret: secret)
            let folder = TestFolders.make()
            let configure: (inout ServerConfiguration) -> Void = { configuration in
                configuration.functionsFile = file
                configuration.functionsClock = clock.function
            }
            let first = try await TestServer.start(dataDirectory: folder, keepData: true, configure: configure)
            let client = first.client()
            #expect(try await client.put("/v1/docs/posts/p1", #"{"publishAt": {"$timestamp": "2026-11-26T08:15:00Z"}}"#).status == 200)
            await client.close()
            await first.stop()
            clock.advance(seconds: 3600)
            try await TestServer.with(configure: { configuration in
                configure(&configuration)
                configuration.storage.dataDirectory = folder
            }) { _, _ in
                // The schedule's 08:00 run, missed while stopped, may arrive too, and in either order.
                var timer: WebhookTestReceiver.Received?
                for count in 1...2 where timer == nil {
                    timer = try await receiver.waitForRequests(count).first { $0.json["name"]?.stringValue == "publishPost" }
                }
                let received = try #require(timer, "the timer's event never arrived")
                #expect(received.verified)
                #expect(received.json["time"]?.stringValue == "2026-11-26T08:15:00.000000Z")
            }
        }
    }
}
