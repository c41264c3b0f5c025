extension Duration {
    /// The duration in seconds, fractions included.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole microseconds, rounded toward zero (the resolution of `Timestamp`).
    public var inMicroseconds: Int64 {
        let (product, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000)
        let (sum, overflow2) = product.addingReportingOverflow(components.attoseconds / 1_000_000_000_000)
        guard !overflow, !overflow2 else { return components.seconds < 0 ? .min : .max }
        return sum
    }
}
