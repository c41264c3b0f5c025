import HearthCore

/// A five-field cron expression (minute, hour, day of month, month, day of week), as crontab(5) reads it:
/// `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`, lists `a,b`, and month and day names (`JAN`, `MON`);
/// 0 and 7 both mean Sunday. When both day fields are restricted, a day matching either one matches.
public struct CronExpression: Sendable, Equatable, CustomStringConvertible {
    /// The allowed values of each field, in order (weekdays 0-6, Sunday 0).
    public let minutes: Set<Int>, hours: Set<Int>, days: Set<Int>, months: Set<Int>, weekdays: Set<Int>
    /// Whether the day-of-month and day-of-week fields were `*` (crontab's rule for combining them).
    public let anyDay: Bool, anyWeekday: Bool
    /// The expression as written.
    public let description: String

    static let monthNames = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    static let dayNames = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]

    /// Parses an expression; errors name `place` and the field.
    public init(_ text: String, at place: String) throws(HearthError) {
        description = text
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard fields.count == 5 else {
            throw .invalidArgument("\(place): '\(text.prefix(100))' has \(fields.count) field(s); a cron expression has 5 (minute hour day-of-month month day-of-week)")
        }
        func field(_ k: Int, _ name: String, _ range: ClosedRange<Int>, names: [String] = [], base: Int = 0) throws(HearthError) -> Set<Int> {
            do {
                return try Self.parseField(fields[k], range: range, names: names, base: base)
            } catch {
                throw .invalidArgument("\(place): \(name) field '\(fields[k].prefix(50))': \(error.message)")
            }
        }
        minutes = try field(0, "minute", 0...59)
        hours = try field(1, "hour", 0...23)
        days = try field(2, "day-of-month", 1...31)
        months = try field(3, "month", 1...12, names: Self.monthNames, base: 1)
        weekdays = Set(try field(4, "day-of-week", 0...7, names: Self.dayNames).map { $0 % 7 })
        anyDay = fields[2] == "*" || fields[2].hasPrefix("*/")
        anyWeekday = fields[4] == "*" || fields[4].hasPrefix("*/")
    }

    /// Whether the expression fires at a local time (weekday 0 is Sunday).
    public func matches(minute: Int, hour: Int, day: Int, month: Int, weekday: Int) -> Bool {
        guard minutes.contains(minute), hours.contains(hour), months.contains(month) else { return false }
        let dayMatches = days.contains(day), weekdayMatches = weekdays.contains(weekday)
        switch (anyDay, anyWeekday) {
        case (true, true): return true
        case (false, true): return dayMatches
        case (true, false): return weekdayMatches
        case (false, false): return dayMatches || weekdayMatches
        }
    }

    static func parseField(_ text: String, range: ClosedRange<Int>, names: [String], base: Int) throws(HearthError) -> Set<Int> {
        var out: Set<Int> = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty else { throw .invalidArgument("an empty list item") }
            let parts = item.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw .invalidArgument("'\(item)' has more than one '/'") }
            var step = 1
            if parts.count == 2 {
                guard let n = Int(parts[1]), n >= 1, n <= range.upperBound else {
                    throw .invalidArgument("the step '\(parts[1])' must be a number from 1 to \(range.upperBound)")
                }
                step = n
            }
            let span = parts[0]
            var low = range.lowerBound, high = range.upperBound
            if span != "*" {
                let ends = span.split(separator: "-", omittingEmptySubsequences: false)
                guard ends.count <= 2 else { throw .invalidArgument("'\(span)' is not a value or a range a-b") }
                low = try value(String(ends[0]), range: range, names: names, base: base)
                high = ends.count == 2 ? try value(String(ends[1]), range: range, names: names, base: base)
                    : (parts.count == 2 ? range.upperBound : low)
                guard low <= high else { throw .invalidArgument("the range '\(span)' ends before it starts") }
            }
            out.formUnion(stride(from: low, through: high, by: step))
        }
        return out
    }

    static func value(_ text: String, range: ClosedRange<Int>, names: [String], base: Int) throws(HearthError) -> Int {
        if let k = names.firstIndex(of: text.uppercased()) { return k + base }
        guard let n = Int(text), range.contains(n) else {
            throw .invalidArgument("'\(text)' is not a value from \(range.lowerBound) to \(range.upperBound)\(names.isEmpty ? "" : " or a name (\(names.first!)...)")")
        }
        return n
    }
}
