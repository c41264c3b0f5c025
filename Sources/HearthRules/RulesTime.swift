import HearthCore

/// A rules timestamp: seconds and nanoseconds since the epoch, UTC, within Firestore's 0001-9999 range.
struct RulesTime: Sendable, Hashable, Comparable {
    let seconds: Int64
    /// 0 ..< 1_000_000_000.
    let nanos: Int64

    static let minSeconds: Int64 = -62_135_596_800
    static let maxSeconds: Int64 = 253_402_300_799

    init(_ t: Timestamp) {
        let (s, us) = floorDiv(t.microseconds, 1_000_000)
        seconds = s
        nanos = us * 1_000
    }

    /// Nil when outside the representable range.
    init?(seconds: Int64, nanos: Int64) {
        let (carry, n) = floorDiv(nanos, 1_000_000_000)
        let (s, overflow) = seconds.addingReportingOverflow(carry)
        guard !overflow, s >= Self.minSeconds, s <= Self.maxSeconds else { return nil }
        self.seconds = s
        self.nanos = n
    }

    static func < (a: RulesTime, b: RulesTime) -> Bool { (a.seconds, a.nanos) < (b.seconds, b.nanos) }

    var timestamp: Timestamp { Timestamp(microseconds: seconds * 1_000_000 + nanos / 1_000) }
    var rfc3339: String { timestamp.rfc3339 }

    private var daysAndSecondOfDay: (Int64, Int64) { floorDiv(seconds, 86_400) }
    var civil: (year: Int64, month: Int64, day: Int64) { Calendar.civil(fromDays: daysAndSecondOfDay.0) }
    var secondOfDay: Int64 { daysAndSecondOfDay.1 }
    /// 1 = Monday ... 7 = Sunday (ISO 8601); 1970-01-01 was a Thursday.
    var dayOfWeek: Int64 { floorDiv(daysAndSecondOfDay.0 + 3, 7).1 + 1 }
    var dayOfYear: Int64 {
        let c = civil
        return daysAndSecondOfDay.0 - Calendar.days(fromCivil: c.year, 1, 1) + 1
    }
    /// Midnight of the same day.
    var date: RulesTime { RulesTime(seconds: seconds - secondOfDay, nanos: 0)! }

    func adding(_ d: RulesDuration) -> RulesTime? {
        let (s, o) = seconds.addingReportingOverflow(d.seconds)
        guard !o else { return nil }
        return RulesTime(seconds: s, nanos: nanos + d.nanos)
    }

    func subtracting(_ other: RulesTime) -> RulesDuration? {
        RulesDuration(seconds: seconds - other.seconds, nanos: nanos - other.nanos)
    }
}

/// A rules duration: signed seconds and nanoseconds (nanos carry the sign of seconds), at most
/// ±315,576,000,000 seconds as in protobuf's Duration.
struct RulesDuration: Sendable, Hashable, Comparable {
    let seconds: Int64
    let nanos: Int64

    static let maxSeconds: Int64 = 315_576_000_000

    /// Normalizes; nil when out of range.
    init?(seconds: Int64, nanos: Int64) {
        var s = seconds, n = nanos
        let (carry, (rest)) = (n / 1_000_000_000, n % 1_000_000_000)
        let (sum, o) = s.addingReportingOverflow(carry)
        guard !o else { return nil }
        s = sum
        n = rest
        if s > 0, n < 0 { s -= 1; n += 1_000_000_000 }
        if s < 0, n > 0 { s += 1; n -= 1_000_000_000 }
        guard s.magnitude <= UInt64(Self.maxSeconds) else { return nil }
        self.seconds = s
        self.nanos = n
    }

    static func < (a: RulesDuration, b: RulesDuration) -> Bool { (a.seconds, a.nanos) < (b.seconds, b.nanos) }

    var negated: RulesDuration { RulesDuration(seconds: -seconds, nanos: -nanos)! }
    var magnitude: RulesDuration { seconds < 0 || nanos < 0 ? negated : self }

    func adding(_ o: RulesDuration) -> RulesDuration? { RulesDuration(seconds: seconds + o.seconds, nanos: nanos + o.nanos) }
}

/// The calendar arithmetic shared with `Timestamp`.
typealias Calendar = CivilCalendar

@inline(__always)
func floorDiv(_ a: Int64, _ b: Int64) -> (Int64, Int64) { floorDivide(a, b) }
