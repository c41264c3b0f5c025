/// Order-preserving byte encodings of values and document paths, for the field index: comparing two keys
/// with `memcmp` (shorter first on a common prefix, as SQLite compares BLOBs) gives `Value.compare`'s order,
/// and values that compare equal (`1` and `1.0`, `0.0` and `-0.0`, any two NaNs) get identical keys.
///
/// Layout: a type tag byte in Firestore's type order, then a payload that is self-delimiting, so no key is a
/// proper prefix of another and keys concatenate (array elements, map entries, composite index keys):
/// - numbers: a class byte (NaN < -Inf < negative < zero < positive < +Inf); finite non-zero numbers add the
///   binary exponent (2 bytes) and the 64 bits after the leading one (8 bytes), both complemented for
///   negatives. Every int64 and every double is exact in this form, so integers and doubles order together.
/// - strings, bytes: the bytes with 0x00 escaped as 0x00 0xFF, ended by 0x00 0x01.
/// - references and document paths: each segment as a string, ended by 0x00 0x00.
/// - arrays: the elements, ended by 0x00 (below every tag); maps: key (as a string) and value pairs in key
///   order, ended by 0x00 0x00 (below every encoded key).
///
/// Descending keys are the bitwise complement. That reverses the order only because no key is a proper prefix
/// of another (the complement of a prefix would still sort first); the terminators above guarantee it.
public enum IndexKey {
    /// Type tags, in Firestore's type order, spaced so a tag is never 0x00 (the array terminator).
    enum Tag {
        static let null: UInt8 = 0x10
        static let bool: UInt8 = 0x20
        static let number: UInt8 = 0x30
        static let timestamp: UInt8 = 0x40
        static let string: UInt8 = 0x50
        static let bytes: UInt8 = 0x60
        static let reference: UInt8 = 0x70
        static let geoPoint: UInt8 = 0x80
        static let array: UInt8 = 0x90
        static let map: UInt8 = 0xA0
    }

    /// Number classes after the number tag.
    enum NumberClass {
        static let nan: UInt8 = 0x00
        static let negativeInfinity: UInt8 = 0x01
        static let negative: UInt8 = 0x02
        static let zero: UInt8 = 0x03
        static let positive: UInt8 = 0x04
        static let positiveInfinity: UInt8 = 0x05
    }

    /// Added to binary exponents (-1074 for the smallest subnormal double, 63 for 2^63) to make them unsigned.
    static let exponentBias = 1100

    /// The ascending key of a value.
    public static func encode(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        append(value, to: &out)
        return out
    }

    /// The descending key of a value: the complement of the ascending key.
    public static func encodeDescending(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        append(value, descending: true, to: &out)
        return out
    }

    /// Appends a value's key to a buffer, ascending or descending.
    public static func append(_ value: Value, descending: Bool = false, to out: inout [UInt8]) {
        let start = out.count
        appendAscending(value, to: &out)
        if descending { complement(&out, from: start) }
    }

    /// The key of a document path, ordering segment by segment (Firestore's `__name__` order).
    public static func encode(path: DocumentPath) -> [UInt8] {
        var out: [UInt8] = []
        appendSegments(path.segments, to: &out)
        return out
    }

    /// Appends a document path's key, ascending or descending.
    public static func append(path: DocumentPath, descending: Bool = false, to out: inout [UInt8]) {
        let start = out.count
        appendSegments(path.segments, to: &out)
        if descending { complement(&out, from: start) }
    }

    static func complement(_ out: inout [UInt8], from start: Int) {
        for k in start..<out.count { out[k] = ~out[k] }
    }

    static func appendAscending(_ value: Value, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(Tag.null)
        case .bool(let b):
            out.append(Tag.bool)
            out.append(b ? 1 : 0)
        case .int(let i):
            out.append(Tag.number)
            appendInt(i, to: &out)
        case .double(let d):
            out.append(Tag.number)
            appendDouble(d, to: &out)
        case .timestamp(let t):
            out.append(Tag.timestamp)
            appendBigEndian(UInt64(bitPattern: t.microseconds) ^ (1 << 63), to: &out)
        case .string(let s):
            out.append(Tag.string)
            appendEscaped(s.utf8, to: &out)
        case .bytes(let b):
            out.append(Tag.bytes)
            appendEscaped(b, to: &out)
        case .reference(let p):
            out.append(Tag.reference)
            appendSegments(p.segments, to: &out)
        case .geoPoint(let g):
            out.append(Tag.geoPoint)
            appendOrderedDouble(g.latitude, to: &out)
            appendOrderedDouble(g.longitude, to: &out)
        case .array(let items):
            out.append(Tag.array)
            for item in items { appendAscending(item, to: &out) }
            out.append(0x00)
        case .map(let fields):
            out.append(Tag.map)
            for key in fields.keys.sorted(by: utf8Less) {
                appendEscaped(key.utf8, to: &out)
                appendAscending(fields[key]!, to: &out)
            }
            out.append(0x00)
            out.append(0x00)
        }
    }

    // MARK: numbers

    static func appendInt(_ i: Int64, to out: inout [UInt8]) {
        if i == 0 {
            out.append(NumberClass.zero)
            return
        }
        // |i| fits in UInt64 even for Int64.min.
        let magnitude = i.magnitude
        let lead = 63 - magnitude.leadingZeroBitCount
        let fraction = lead == 0 ? 0 : magnitude << (64 - lead)
        appendFinite(negative: i < 0, exponent: lead, fraction: fraction, to: &out)
    }

    static func appendDouble(_ d: Double, to out: inout [UInt8]) {
        if d.isNaN { out.append(NumberClass.nan); return }
        if d.isInfinite { out.append(d < 0 ? NumberClass.negativeInfinity : NumberClass.positiveInfinity); return }
        if d == 0 { out.append(NumberClass.zero); return }
        let exponent: Int
        let fraction: UInt64
        if d.isSubnormal {
            // value = m * 2^-1074 with m < 2^52: the leading one of m sets the exponent.
            let m = d.significandBitPattern
            let lead = 63 - m.leadingZeroBitCount
            exponent = lead - 1074
            fraction = lead == 0 ? 0 : m << (64 - lead)
        } else {
            exponent = Int(d.exponent)
            fraction = d.significandBitPattern << 12
        }
        appendFinite(negative: d < 0, exponent: exponent, fraction: fraction, to: &out)
    }

    /// A finite non-zero number `±1.fraction × 2^exponent`: larger magnitudes have larger (exponent, fraction),
    /// so negatives store both complemented.
    static func appendFinite(negative: Bool, exponent: Int, fraction: UInt64, to out: inout [UInt8]) {
        let biased = UInt16(exponent + exponentBias)
        if negative {
            out.append(NumberClass.negative)
            appendBigEndian(~biased, to: &out)
            appendBigEndian(~fraction, to: &out)
        } else {
            out.append(NumberClass.positive)
            appendBigEndian(biased, to: &out)
            appendBigEndian(fraction, to: &out)
        }
    }

    /// A double as 8 bytes in Firestore's double order (NaN first, -0.0 equal to 0.0), for geopoints.
    static func appendOrderedDouble(_ d: Double, to out: inout [UInt8]) {
        if d.isNaN {
            appendBigEndian(UInt64(0), to: &out)
            return
        }
        let bits = (d == 0 ? 0.0 : d).bitPattern
        // Flip negatives entirely and set the sign bit of positives; NaN's 0 sits below -Infinity's 0x000F....
        appendBigEndian(bits >> 63 == 1 ? ~bits : bits | (1 << 63), to: &out)
    }

    // MARK: bytes

    static func appendEscaped(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        // Bytes without a NUL (nearly every string) are copied at once.
        let copied: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            guard buffer.contains(0) else {
                out.append(contentsOf: buffer)
                return
            }
            for b in buffer {
                out.append(b)
                if b == 0x00 { out.append(0xFF) }
            }
        }
        if copied == nil {
            for b in bytes {
                out.append(b)
                if b == 0x00 { out.append(0xFF) }
            }
        }
        out.append(0x00)
        out.append(0x01)
    }

    static func appendSegments(_ segments: [String], to out: inout [UInt8]) {
        for s in segments { appendEscaped(s.utf8, to: &out) }
        out.append(0x00)
        out.append(0x00)
    }

    static func appendBigEndian<T: FixedWidthInteger>(_ v: T, to out: inout [UInt8]) {
        var x = v.bigEndian
        withUnsafeBytes(of: &x) { out.append(contentsOf: $0) }
    }
}
