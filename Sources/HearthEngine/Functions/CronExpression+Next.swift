import Foundation
import HearthCore

/// When a cron expression fires next, in a time zone, with the daylight-saving rule of docs/functions.md:
/// a local time that does not exist (inside a spring-forward gap) fires at the first instant after the gap,
/// and a local time that occurs twice (a fall-back) fires once, at its first occurrence.
extension CronExpression {
    /// The first instant after `after` (strictly) at which the expression fires in `zone`, or nil when it
    /// never fires within eight years (`0 0 30 2 *`).
    public func next(after: Timestamp, in zone: TimeZone) -> Timestamp? {
        let afterSecond = floorDivide(after.microseconds, 1_000_000).0
        let wall = afterSecond + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(afterSecond))))
        let (startDay, startSecond) = floorDivide(wall, 86_400)
        let startMinute = Int(startSecond / 60)
        let sortedHours = hours.sorted(), sortedMinutes = minutes.sorted()
        // Local times map to instants in order (a gap's times to its end, a repeated time to its first
        // occurrence), so the first local time from `after`'s own whose instant is later is the answer.
        for day in startDay..<(startDay + 366 * 8) {
            let (_, month, dayOfMonth) = CivilCalendar.civil(fromDays: day)
            // 1970-01-01 was a Thursday (4).
            guard months.contains(Int(month)), firesOn(day: Int(dayOfMonth), weekday: Int(floorDivide(day + 4, 7).1)) else { continue }
            for hour in sortedHours {
                if day == startDay && hour < startMinute / 60 { continue }
                for minute in sortedMinutes {
                    if day == startDay && hour * 60 + minute < startMinute { continue }
                    let local = day * 86_400 + Int64(hour * 3600 + minute * 60)
                    let instant = Self.instant(ofLocal: local, in: zone) * 1_000_000
                    if instant > after.microseconds { return Timestamp(microseconds: instant) }
                }
            }
        }
        return nil
    }

    /// Whether the day fields allow a day (crontab's rule: either one when both are restricted).
    func firesOn(day: Int, weekday: Int) -> Bool {
        switch (anyDay, anyWeekday) {
        case (true, true): return true
        case (false, true): return days.contains(day)
        case (true, false): return weekdays.contains(weekday)
        case (false, false): return days.contains(day) || weekdays.contains(weekday)
        }
    }

    /// The instant (seconds since 1970) of a local time (seconds since 1970 as if the zone were UTC): its
    /// first occurrence when it occurs twice, the end of the gap when it does not occur.
    static func instant(ofLocal local: Int64, in zone: TimeZone) -> Int64 {
        func offset(_ instant: Int64) -> Int64 { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant)))) }
        let early = offset(local - 86_400), late = offset(local + 86_400)
        let valid = [local - early, local - late].filter { offset($0) == local - $0 }
        if let first = valid.min() { return first }
        // In a gap the offset grows from `early` to `late`: find the first instant at the later offset.
        var low = local - late, high = local - early  // offset(low) is the earlier one, offset(high) the later.
        while high - low > 1 {
            let mid = low + (high - low) / 2
            if offset(mid) == early { low = mid } else { high = mid }
        }
        return high
    }
}
