/// A value as queries and array transforms compare it (`Value.compare(a, b) == 0`: `1` equals `1.0`, NaN
/// equals NaN, `-0.0` equals `0.0`), hashable accordingly, so that sets of values can be kept by that equality.
public struct QueryEqual: Hashable, Sendable {
    /// The value.
    public let value: Value

    /// Wraps a value.
    public init(_ value: Value) { self.value = value }

    public static func == (a: QueryEqual, b: QueryEqual) -> Bool {
        Value.compare(a.value, b.value) == 0
    }

    public func hash(into hasher: inout Hasher) {
        Self.hash(value, into: &hasher)
    }

    /// Equal values hash alike: an integral double hashes as the integer it equals.
    static func hash(_ value: Value, into hasher: inout Hasher) {
        hasher.combine(value.typeOrder)
        switch value {
        case .null: break
        case .bool(let b): hasher.combine(b)
        case .int(let i): hasher.combine(i)
        case .double(let d): hashNumber(d, into: &hasher)
        case .timestamp(let t): hasher.combine(t)
        case .string(let s): for byte in s.utf8 { hasher.combine(byte) }
        case .bytes(let b): hasher.combine(b)
        case .reference(let p): hasher.combine(p)
        case .geoPoint(let g):
            hashDouble(g.latitude, into: &hasher)
            hashDouble(g.longitude, into: &hasher)
        case .array(let items):
            hasher.combine(items.count)
            for item in items { hash(item, into: &hasher) }
        case .map(let fields):
            hasher.combine(fields.count)
            for key in fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                for byte in key.utf8 { hasher.combine(byte) }
                hash(fields[key]!, into: &hasher)
            }
        }
    }

    static func hashNumber(_ d: Double, into hasher: inout Hasher) {
        if d.isNaN { return hasher.combine(UInt8(0)) }
        if d.rounded(.towardZero) == d, d >= -9_223_372_036_854_775_808.0, d < 9_223_372_036_854_775_808.0 {
            return hasher.combine(Int64(d))
        }
        hasher.combine(d.bitPattern)
    }

    static func hashDouble(_ d: Double, into hasher: inout Hasher) {
        if d.isNaN { return hasher.combine(UInt8(0)) }
        hasher.combine(d == 0 ? 0 : d.bitPattern)
    }
}
