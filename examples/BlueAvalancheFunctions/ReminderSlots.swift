import Foundation
import HearthCore

/// Which users a run of the half-hourly `dailyReminder` schedule reminds: those whose local time is in the
/// first half of their `reminderHour`. Every zone's clock shows each hour's first half exactly once between
/// two runs (offsets are whole, half or three-quarter hours), so a user is reminded once a day, at most 15
/// minutes into their hour. A zone's day without that hour (clocks going forward) has no reminder; one with
/// it twice (clocks going back) has two.
enum ReminderSlots {
    /// The time zones, among `zones`, whose local time at `instant` is in the first half of an hour, by that hour.
    static func zonesByLocalHour(at instant: Timestamp,
                                 zones: [String] = knownZones) -> [Int: [String]] {
        let date = Date(timeIntervalSince1970: instant.secondsSinceEpoch)
        let seconds = Int64(floor(instant.secondsSinceEpoch))
        var byHour: [Int: [String]] = [:]
        for identifier in zones {
            guard let zone = TimeZone(identifier: identifier) else { continue }
            let local = seconds + Int64(zone.secondsFromGMT(for: date))
            let secondOfDay = ((local % 86_400) + 86_400) % 86_400
            guard secondOfDay % 3600 < 1800 else { continue }
            byHour[Int(secondOfDay / 3600), default: []].append(identifier)
        }
        return byHour
    }

    /// Every time zone name this machine resolves: Foundation's list (ICU's names, which miss some current
    /// IANA names such as Asia/Kolkata, listed as Asia/Calcutta) and the tz database's files where there are.
    static let knownZones: [String] = {
        var names = Set(TimeZone.knownTimeZoneIdentifiers)
        for folder in ["/usr/share/zoneinfo", "/var/db/timezone/zoneinfo"] {
            for path in FileManager.default.subpaths(atPath: folder) ?? [] {
                guard path.first?.isUppercase == true, !names.contains(path) else { continue }
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isFolder), !isFolder.boolValue,
                      TimeZone(identifier: path) != nil else { continue }
                names.insert(path)
            }
        }
        return names.sorted()
    }()
}
