import Foundation
import HearthCore
import HearthTesting
import Testing
@testable import blue_avalanche_functions

/// The Blue Avalanche example without a socket: which time zones a run of the reminder reminds, and how the
/// service reads its settings.
struct BlueAvalancheSlotsTests {
    struct SlotCase: Sendable, CustomStringConvertible {
        let time: String
        let zone: String
        /// The reminder hour the run reaches in that zone, or nil when its local time is in an hour's second half.
        let hour: Int?
        var description: String { "\(zone) at \(time)" }
    }

    static let slotCases: [SlotCase] = [
        .init(time: "2026-11-27T14:00:00Z", zone: "America/Chicago", hour: 8),   // CST, UTC−6
        .init(time: "2026-07-01T13:00:00Z", zone: "America/Chicago", hour: 8),   // CDT, UTC−5
        .init(time: "2026-11-27T14:30:00Z", zone: "America/Chicago", hour: nil),
        .init(time: "2026-11-27T07:00:00Z", zone: "Europe/London", hour: 7),
        .init(time: "2026-07-01T06:00:00Z", zone: "Europe/London", hour: 7),     // BST
        .init(time: "2026-11-27T04:30:00Z", zone: "Asia/Kolkata", hour: 10),     // UTC+5:30: 10:00
        .init(time: "2026-11-27T04:00:00Z", zone: "Asia/Kolkata", hour: nil),    // 09:30
        .init(time: "2026-11-27T04:30:00Z", zone: "Asia/Kathmandu", hour: 10),   // UTC+5:45: 10:15
        .init(time: "2026-11-27T04:00:00Z", zone: "Asia/Kathmandu", hour: nil),  // 09:45
        .init(time: "2026-11-26T23:30:00Z", zone: "Australia/Adelaide", hour: 10),  // ACDT, UTC+10:30
        .init(time: "2026-11-26T23:30:00Z", zone: "Pacific/Chatham", hour: 13),  // UTC+13:45: 13:15
        .init(time: "2026-11-27T00:00:00Z", zone: "UTC", hour: 0),
        .init(time: "2026-03-29T01:00:00Z", zone: "Europe/Paris", hour: 3),      // clocks go forward: 02:00 never comes
        .init(time: "2026-11-27T14:00:00Z", zone: "Mars/Olympus", hour: nil),    // not a time zone: nobody there is reminded
    ]

    @Test(arguments: slotCases) func aRunRemindsTheZonesInTheFirstHalfOfAnHour(_ row: SlotCase) {
        let groups = ReminderSlots.zonesByLocalHour(at: .at(row.time), zones: [row.zone])
        #expect(groups.first { $0.value.contains(row.zone) }?.key == row.hour)
    }

    /// Over a day without a clock change, the 48 runs remind every known zone once at each of its 24 hours.
    @Test func everyZoneHasEachHourOnceADay() throws {
        let zones = ReminderSlots.knownZones
        for zone in ["America/Chicago", "Europe/London", "Asia/Kolkata", "Asia/Calcutta", "Asia/Kathmandu", "Europe/Kyiv"] {
            #expect(zones.contains(zone), "\(zone) is missing")
        }
        let start = Timestamp.at("2026-11-27T00:00:00Z")
        var hours: [String: [Int]] = [:]
        for run in 0..<48 {
            let time = Timestamp(microseconds: start.microseconds + Int64(run) * 1_800_000_000)
            for (hour, zones) in ReminderSlots.zonesByLocalHour(at: time, zones: zones) {
                for zone in zones { hours[zone, default: []].append(hour) }
            }
        }
        let day = Date(timeIntervalSince1970: start.secondsSinceEpoch)
        for zone in zones {
            guard let tz = TimeZone(identifier: zone),
                  tz.secondsFromGMT(for: day) == tz.secondsFromGMT(for: day.addingTimeInterval(86_400)) else { continue }
            #expect(hours[zone]?.sorted() == Array(0..<24), "\(zone): \(hours[zone] ?? [])")
        }
    }

    struct SettingsCase: Sendable, CustomStringConvertible {
        let name: String
        let environment: [String: String]
        let arguments: [String]
        /// The Hearth and networks URLs read, or the error.
        let expected: Result<[String], SettingsError>
        var description: String { name }
    }

    static let settingsCases: [SettingsCase] = [
        .init(name: "the networks from the environment, Hearth by default", environment: ["BLUE_AVALANCHE_NETWORKS_URL": "https://networks.example.com"],
              arguments: [], expected: .success(["http://127.0.0.1:8080", "https://networks.example.com"])),
        .init(name: "both from arguments", environment: ["HEARTH_URL": "http://db:8080"],
              arguments: ["--hearth-url", "http://hearth:8080", "--networks-url", "http://127.0.0.1:7000"],
              expected: .success(["http://hearth:8080", "http://127.0.0.1:7000"])),
        .init(name: "Hearth from the environment", environment: ["HEARTH_URL": "http://db:8080", "BLUE_AVALANCHE_NETWORKS_URL": "http://n"],
              arguments: [], expected: .success(["http://db:8080", "http://n"])),
        .init(name: "no networks' URL", environment: [:], arguments: [],
              expected: .failure(SettingsError("set BLUE_AVALANCHE_NETWORKS_URL (or --networks-url) to the social networks' API"))),
        .init(name: "an argument without its value", environment: [:], arguments: ["--networks-url"],
              expected: .failure(SettingsError("--networks-url needs a URL"))),
        .init(name: "an unknown argument", environment: ["BLUE_AVALANCHE_NETWORKS_URL": "http://n"], arguments: ["--port", "9000"],
              expected: .failure(SettingsError("unknown argument '--port'"))),
        .init(name: "not http", environment: ["BLUE_AVALANCHE_NETWORKS_URL": "ftp://networks.example.com"], arguments: [],
              expected: .failure(SettingsError("--networks-url: 'ftp://networks.example.com' is not an http or https URL"))),
        .init(name: "not a URL", environment: ["BLUE_AVALANCHE_NETWORKS_URL": "http://n", "HEARTH_URL": "localhost"], arguments: [],
              expected: .failure(SettingsError("--hearth-url: 'localhost' is not an http or https URL"))),
    ]

    @Test(arguments: settingsCases) func theServiceReadsItsSettings(_ row: SettingsCase) {
        let read = BlueAvalancheSettings.from(environment: row.environment, arguments: row.arguments)
        switch (read, row.expected) {
        case (.success(let settings), .success(let urls)):
            #expect([settings.hearthURL.absoluteString, settings.networksURL.absoluteString] == urls)
        case (.failure(let error), .failure(let expected)):
            #expect(error.description == expected.description)
        default:
            Issue.record("\(row.name): read \(read), expected \(row.expected)")
        }
    }
}
