import HearthCore

extension Timestamp {
    /// This time moved by whole seconds, clamped to the representable range.
    func adding(seconds: Int64) -> Timestamp {
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (sum, overflow2) = microseconds.addingReportingOverflow(product)
        guard !overflow, !overflow2 else { return seconds > 0 ? .max : .min }
        return Timestamp(microseconds: Swift.min(Swift.max(sum, Timestamp.min.microseconds), Timestamp.max.microseconds))
    }

    /// Whole seconds since the epoch (JWT-style `iat`/`exp`/`auth_time`).
    var epochSeconds: Int64 {
        microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
    }
}
