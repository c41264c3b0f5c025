#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time with microsecond precision, in UTC, between 0001-01-01 and 9999-12-31 (Firestore's range).
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64

    /// The earliest representable timestamp, 0001-01-01T00:00:00Z.
    public static let min = Timestamp(microseconds: -62_135_596_800_000_000)
    /// The latest representable timestamp, 9999-12-31T23:59:59.999999Z.
    public static let max = Timestamp(microseconds: 253_402_300_799_999_999)

    /// Makes a timestamp from microseconds since the Unix epoch.
    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// The current wall-clock time.
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(microseconds: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }

    /// Seconds since the epoch, as a double.
    public var secondsSinceEpoch: Double { Double(microseconds) / 1_000_000 }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// RFC 3339 in UTC with six fraction digits, e.g. `2026-11-22T10:00:00.123456Z`.
    public var description: String { rfc3339 }

    /// RFC 3339 in UTC with six fraction digits, e.g. `2026-11-22T10:00:00.123456Z`.
    public var rfc3339: String {
        String(unsafeUninitializedCapacity: Self.rfc3339Bytes) { writeRFC3339($0) }
    }

    /// The most bytes `rfc3339` takes.
    static let rfc3339Bytes = 27

    /// Writes `rfc3339`'s bytes to the start of `out` (at least `rfc3339Bytes` long) and returns their count:
    /// this runs twice for every document answered, so it writes in place, with no string in between.
    func writeRFC3339(_ out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let (secs, micros) = floorDivide(microseconds, 1_000_000)
        let (days, secOfDay) = floorDivide(secs, 86_400)
        let (y, m, d) = CivilCalendar.civil(fromDays: days)
        var i = 0
        func put(_ value: Int64, _ width: Int) {
            var v = value
            for k in stride(from: width - 1, through: 0, by: -1) {
                out[i + k] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
            i += width
        }
        func sep(_ c: UInt8) {
            out[i] = c
            i += 1
        }
        put(y, 4); sep(UInt8(ascii: "-")); put(m, 2); sep(UInt8(ascii: "-")); put(d, 2); sep(UInt8(ascii: "T"))
        put(secOfDay / 3600, 2); sep(UInt8(ascii: ":")); put(secOfDay % 3600 / 60, 2); sep(UInt8(ascii: ":"))
        put(secOfDay % 60, 2); sep(UInt8(ascii: ".")); put(micros, 6); sep(UInt8(ascii: "Z"))
        return i
    }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`); digits past microseconds are truncated.
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ n: Int) -> Int64? {
            guard i + n <= b.count else { return nil }
            var v: Int64 = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            i += n
            return v
        }
        func expect(_ chars: String) -> Bool {
            guard i < b.count, chars.utf8.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
              expect("Tt "), let hour = digits(2), expect(":"), let minute = digits(2), expect(":"),
              let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilCalendar.daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var micros: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var count = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if count < 6 { micros = micros * 10 + Int64(b[i] - 48) }
                count += 1
                i += 1
            }
            guard count > 0, count <= 9 else { return nil }
            if count < 6 { for _ in count..<6 { micros *= 10 } }
        }
        var offsetSeconds: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
            i += 1
            guard let oh = digits(2), expect(":"), let om = digits(2), oh < 24, om < 60 else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = CivilCalendar.days(fromCivil: year, month, day)
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        let value = secs * 1_000_000 + micros
        guard value >= Timestamp.min.microseconds, value <= Timestamp.max.microseconds else { return nil }
        self.microseconds = value
    }
}

/// Division rounding toward negative infinity, with a non-negative remainder.
@inline(__always)
public func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    var q = a / b
    var r = a % b
    if r < 0 { q -= 1; r += b }
    return (q, r)
}
