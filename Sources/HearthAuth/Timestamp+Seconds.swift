import HearthCore

extension Timestamp {
    /// This time moved by a duration (to the microsecond), clamped to the representable range.
    func adding(_ duration: Duration) -> Timestamp {
        let (sum, overflow) = microseconds.addingReportingOverflow(duration.inMicroseconds)
        guard !overflow else { return duration > .zero ? .max : .min }
        return Timestamp(microseconds: Swift.min(Swift.max(sum, Timestamp.min.microseconds), Timestamp.max.microseconds))
    }

    /// Whole seconds since the epoch (JWT-style `iat`/`exp`/`auth_time`).
    var epochSeconds: Int64 {
        microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
    }
}
