import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// Schedules: when a cron expression fires next across daylight-saving changes, and slots turned into events
/// once each (missed runs once, a clock set back firing nothing twice, kept across a restart).
@Suite struct FunctionSchedulesTests {
    struct NextCase: CustomTestStringConvertible, Sendable {
        let cron: String, zone: String, after: String, next: String?, why: String
        var testDescription: String { "\(cron) in \(zone) after \(after): \(why)" }
    }

    // Europe/Paris 2026: 02:00 CET becomes 03:00 CEST on 29 March (01:00Z); 03:00 CEST becomes 02:00 CET on
    // 25 October (01:00Z). America/New_York 2026: 02:00 EST becomes 03:00 EDT on 8 March (07:00Z); 02:00 EDT
    // becomes 01:00 EST on 1 November (06:00Z).
    static let nextCases: [NextCase] = [
        .init(cron: "0 9 * * *", zone: "Europe/Paris", after: "2026-03-28T08:00:00Z", next: "2026-03-29T07:00:00Z",
              why: "09:00 is an hour earlier in UTC once summer time starts"),
        .init(cron: "30 2 * * *", zone: "Europe/Paris", after: "2026-03-28T12:00:00Z", next: "2026-03-29T01:00:00Z",
              why: "02:30 does not exist: the first instant after the gap (03:00 CEST)"),
        .init(cron: "30 2 * * *", zone: "Europe/Paris", after: "2026-03-29T01:00:00Z", next: "2026-03-30T00:30:00Z",
              why: "the next day 02:30 exists again"),
        .init(cron: "*/30 * * * *", zone: "Europe/Paris", after: "2026-03-29T00:45:00Z", next: "2026-03-29T01:00:00Z",
              why: "02:00, 02:30 and 03:00 all fall at the gap's end"),
        .init(cron: "*/30 * * * *", zone: "Europe/Paris", after: "2026-03-29T01:00:00Z", next: "2026-03-29T01:30:00Z",
              why: "the gap's end fires once"),
        .init(cron: "30 2 * * *", zone: "Europe/Paris", after: "2026-10-24T12:00:00Z", next: "2026-10-25T00:30:00Z",
              why: "02:30 occurs twice: its first occurrence (CEST)"),
        .init(cron: "30 2 * * *", zone: "Europe/Paris", after: "2026-10-25T00:30:00Z", next: "2026-10-26T01:30:00Z",
              why: "not again at its second occurrence (CET)"),
        .init(cron: "*/30 * * * *", zone: "Europe/Paris", after: "2026-10-25T00:45:00Z", next: "2026-10-25T02:00:00Z",
              why: "the repeated hour's times fired in its first pass; next is 03:00 CET"),
        .init(cron: "0 9 * * *", zone: "Europe/Paris", after: "2026-10-25T07:00:00Z", next: "2026-10-25T08:00:00Z",
              why: "09:00 is an hour later in UTC once summer time ends"),
        .init(cron: "30 2 * * *", zone: "America/New_York", after: "2026-03-07T12:00:00Z", next: "2026-03-08T07:00:00Z",
              why: "02:30 does not exist: 03:00 EDT"),
        .init(cron: "0 12 * * *", zone: "America/New_York", after: "2026-03-08T07:00:00Z", next: "2026-03-08T16:00:00Z",
              why: "noon EDT"),
        .init(cron: "30 1 * * *", zone: "America/New_York", after: "2026-10-31T12:00:00Z", next: "2026-11-01T05:30:00Z",
              why: "01:30 occurs twice: its first occurrence (EDT)"),
        .init(cron: "30 1 * * *", zone: "America/New_York", after: "2026-11-01T05:30:00Z", next: "2026-11-02T06:30:00Z",
              why: "not again at 01:30 EST"),
        .init(cron: "0 0 29 2 *", zone: "UTC", after: "2026-01-01T00:00:00Z", next: "2028-02-29T00:00:00Z",
              why: "the next 29 February"),
        .init(cron: "0 0 30 2 *", zone: "UTC", after: "2026-01-01T00:00:00Z", next: nil, why: "30 February never comes"),
        .init(cron: "0 12 * * MON", zone: "UTC", after: "2026-11-27T00:00:00Z", next: "2026-11-30T12:00:00Z",
              why: "the Monday after a Friday"),
        .init(cron: "0 0 1,15 * 5", zone: "UTC", after: "2026-11-27T00:00:00Z", next: "2026-12-01T00:00:00Z",
              why: "both day fields restricted: either matches (the 1st before the next Friday)"),
        .init(cron: "15 10 * * *", zone: "UTC", after: "2026-11-27T10:15:00Z", next: "2026-11-28T10:15:00Z",
              why: "strictly after: a slot at the time itself is not next"),
        .init(cron: "15 10 * * *", zone: "UTC", after: "2026-11-27T10:14:59.999999Z", next: "2026-11-27T10:15:00Z",
              why: "a microsecond before the slot"),
    ]

    @Test(arguments: nextCases) func nextFireTime(_ c: NextCase) throws {
        let cron = try CronExpression(c.cron, at: "cron")
        let zone = try #require(TimeZone(identifier: c.zone))
        #expect(cron.next(after: .at(c.after), in: zone)?.rfc3339 == c.next.map { Timestamp.at($0).rfc3339 })
    }

    static let secret = "whsec_" + Base64.encode(Array(repeating: UInt8(7), count: 32))

    static func file(cron: String = "0 9 * * *", zone: String = "Europe/Paris") throws -> FunctionsFile {
        try FunctionsFile.parse(JSON.parse("""
            {"endpoints": {"app": {"url": "http://127.0.0.1:9/hooks", "secret": "\(secret)"}},
             "schedules": [{"name": "daily", "cron": "\(cron)", "timeZone": "\(zone)", "endpoint": "app"}]}
            """))
    }

    static func open(_ file: FunctionsFile, dataDirectory: String? = nil) async throws -> TestDatabase {
        let test = try await TestDatabase.open(dataDirectory: dataDirectory)
        test.database.functions.install(file)
        return test
    }

    @Test func aSlotFiresOnceWithItsTimeAndMissedRunsFireOnce() async throws {
        let test = try await Self.open(Self.file())
        defer { test.close() }
        let db = test.database
        // First seen at 08:00 Paris on 26 November: it starts from then, nothing missed.
        var run = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T07:00:00Z")))
        #expect(run.fired == 0)
        #expect(run.next == .at("2026-11-26T08:00:00Z"))
        run = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T07:59:59Z")))
        #expect(run.fired == 0)
        run = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T08:00:00.5Z")))
        #expect(run.fired == 1)
        #expect(run.next == .at("2026-11-27T08:00:00Z"))
        run = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T08:00:01Z")))
        #expect(run.fired == 0)
        // Down from the 27th to the 30th at 10:00 Paris: four slots missed, one event, for the latest.
        run = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-30T09:00:00Z")))
        #expect(run.fired == 1)
        let events = try await db.pendingFunctionEvents()
        #expect(events.count == 2)
        let bodies = try events.map { try JSON.parse($0.body) }
        #expect(bodies.map { $0["type"]?.stringValue } == ["schedule", "schedule"])
        #expect(bodies.map { $0["name"]?.stringValue } == ["daily", "daily"])
        #expect(bodies.map { $0["time"]?.stringValue } == ["2026-11-26T08:00:00.000000Z", "2026-11-30T08:00:00.000000Z"])
        #expect(bodies[1]["schedule"] == .object([("name", .string("daily")), ("scheduledTime", .string("2026-11-30T08:00:00.000000Z"))]))
        #expect(bodies.map { $0["id"]?.stringValue } == events.map(\.id))
        #expect(events.allSatisfy { $0.endpoint == "app" })
    }

    @Test func aClockSetBackFiresNoSlotTwice() async throws {
        let test = try await Self.open(Self.file(cron: "*/10 * * * *", zone: "UTC"))
        defer { test.close() }
        let db = test.database
        _ = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T10:05:00Z")))
        #expect(try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T10:10:00Z"))).fired == 1)
        // The clock goes back half an hour, then forward again through the same slots.
        for now in ["2026-11-26T09:40:00Z", "2026-11-26T09:50:00Z", "2026-11-26T10:00:00Z", "2026-11-26T10:10:00Z",
                    "2026-11-26T10:19:59Z"] {
            let run = try await db.runFunctionClock(.runSchedules(now: .at(now)))
            #expect(run.fired == 0, "at \(now)")
            #expect(run.next == .at("2026-11-26T10:20:00Z"))
        }
        #expect(try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T10:20:00Z"))).fired == 1)
        #expect(try await db.pendingFunctionEvents().count == 2)
    }

    @Test func theLastSlotIsKeptAcrossARestart() async throws {
        let first = try await Self.open(Self.file())
        let folder = first.dataDirectory
        _ = try await first.database.runFunctionClock(.runSchedules(now: .at("2026-11-26T07:00:00Z")))
        #expect(try await first.database.runFunctionClock(.runSchedules(now: .at("2026-11-26T08:00:00Z"))).fired == 1)
        first.closeKeepingData()
        let second = try await Self.open(Self.file(), dataDirectory: folder)
        defer { second.close() }
        #expect(try await second.database.functionSchedule("daily")?.lastSlot == .at("2026-11-26T08:00:00Z"))
        #expect(try await second.database.runFunctionClock(.runSchedules(now: .at("2026-11-26T08:30:00Z"))).fired == 0)
        // Down over the next slot: it fires once at start.
        #expect(try await second.database.runFunctionClock(.runSchedules(now: .at("2026-11-27T12:00:00Z"))).fired == 1)
        #expect(try await second.database.pendingFunctionEvents().count == 2)
    }

    @Test func aChangedExpressionStartsAfreshWithoutCatchingUp() async throws {
        let test = try await Self.open(Self.file(cron: "0 9 * * *"))
        defer { test.close() }
        let db = test.database
        _ = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-26T07:00:00Z")))
        test.database.functions.install(try Self.file(cron: "0 10 * * *"))
        let run = try await db.runFunctionClock(.runSchedules(now: .at("2026-11-27T12:00:00Z")))
        #expect(run.fired == 0)
        #expect(run.next == .at("2026-11-28T09:00:00Z"))
        #expect(try await db.functionSchedule("daily")?.spec == "0 10 * * * Europe/Paris")
    }
}
