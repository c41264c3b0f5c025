/// What the field index's scans need beyond encoding single values: keys of bare path segments (the index
/// names documents by them), their decoding, and the key range of one type class (range filters only match
/// values of their operand's class).
extension IndexKey {
    /// The key of a sequence of path segments, ordering segment by segment (`encode(path:)` for any segments).
    public static func encode(segments: [String]) -> [UInt8] {
        var out: [UInt8] = []
        appendSegments(segments, to: &out)
        return out
    }

    /// The key prefix shared by every path that starts with these segments (a path below them, or them).
    public static func prefix(segments: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for s in segments { appendEscaped(s.utf8, to: &out) }
        return out
    }

    /// The segments a key from `encode(segments:)` holds, or nil when the bytes are not such a key.
    public static func decodeSegments(_ key: [UInt8]) -> [String]? {
        key.withUnsafeBufferPointer { bytes -> [String]? in
            var segments: [String] = []
            var start = 0
            var escaped: [UInt8]?  // the current segment's bytes once it has held an escaped NUL
            var k = 0
            while k < bytes.count {
                guard bytes[k] == 0x00 else {
                    k += 1
                    continue
                }
                guard k + 1 < bytes.count else { return nil }
                switch bytes[k + 1] {
                case 0xFF:
                    escaped = (escaped ?? []) + bytes[start..<k] + [0x00]
                    start = k + 2
                case 0x01:
                    let tail = UnsafeBufferPointer(rebasing: bytes[start..<k])
                    if let prefix = escaped {
                        segments.append(String(decoding: prefix + tail, as: UTF8.self))
                    } else {
                        segments.append(String(decoding: tail, as: UTF8.self))
                    }
                    escaped = nil
                    start = k + 2
                case 0x00:
                    return start == k && escaped == nil && k + 2 == bytes.count ? segments : nil
                default:
                    return nil
                }
                k += 2
            }
            return nil
        }
    }

    /// The keys bounding the values of `value`'s type class that a range filter (`< <= > >=`) can match:
    /// every such key is at least `lower` and below `upper`. NaN, which no range filter matches, sorts below
    /// `lower` for numbers.
    public static func rangeClass(of value: Value) -> (lower: [UInt8], upper: [UInt8]) {
        let tag: UInt8
        switch value {
        case .null: tag = Tag.null
        case .bool: tag = Tag.bool
        case .int, .double: return ([Tag.number, NumberClass.negativeInfinity], [Tag.number + 1])
        case .timestamp: tag = Tag.timestamp
        case .string: tag = Tag.string
        case .bytes: tag = Tag.bytes
        case .reference: tag = Tag.reference
        case .geoPoint: tag = Tag.geoPoint
        case .array: tag = Tag.array
        case .map: tag = Tag.map
        }
        return ([tag], [tag + 1])
    }
}
