/// Comparisons whose running time does not depend on where the inputs differ.
enum ConstantTime {
    /// True when both byte strings are equal; the time depends only on the lengths, never on the contents.
    static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        var difference: UInt8 = a.count == b.count ? 0 : 1
        // Walk the longer input fully so a length mismatch takes as long as a content mismatch.
        var ia = a.makeIterator()
        var ib = b.makeIterator()
        for _ in 0..<max(a.count, b.count) {
            let x = ia.next() ?? 0
            let y = ib.next() ?? 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
