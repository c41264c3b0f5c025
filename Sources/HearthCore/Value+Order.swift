extension Value: Comparable {
    /// Firestore's total order across types.
    public static func < (a: Value, b: Value) -> Bool { compare(a, b) < 0 }

    /// Firestore's total order: null < booleans < numbers (NaN first; integers and doubles by value) <
    /// timestamps < strings (UTF-8 bytes) < bytes < references (segment by segment) < geopoints <
    /// arrays (element-wise, prefix first) < maps (sorted keys, then values). Returns -1, 0 or 1.
    public static func compare(_ a: Value, _ b: Value) -> Int {
        let ta = a.typeOrder, tb = b.typeOrder
        if ta != tb { return ta < tb ? -1 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.int(let x), .int(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.double(let x), .double(let y)): return compareDoubles(x, y)
        case (.int(let x), .double(let y)): return compareIntDouble(x, y)
        case (.double(let x), .int(let y)): return -compareIntDouble(y, x)
        case (.timestamp(let x), .timestamp(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.string(let x), .string(let y)): return compareUTF8(x, y)
        case (.bytes(let x), .bytes(let y)): return compareBytes(x, y)
        case (.reference(let x), .reference(let y)): return x.compare(y)
        case (.geoPoint(let x), .geoPoint(let y)):
            let c = compareDoubles(x.latitude, y.latitude)
            return c != 0 ? c : compareDoubles(x.longitude, y.longitude)
        case (.array(let x), .array(let y)):
            for (u, v) in zip(x, y) {
                let c = compare(u, v)
                if c != 0 { return c }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        case (.map(let x), .map(let y)):
            let kx = x.keys.sorted(by: utf8Less), ky = y.keys.sorted(by: utf8Less)
            for (k1, k2) in zip(kx, ky) {
                let ck = compareUTF8(k1, k2)
                if ck != 0 { return ck }
                let cv = compare(x[k1]!, y[k2]!)
                if cv != 0 { return cv }
            }
            return kx.count == ky.count ? 0 : (kx.count < ky.count ? -1 : 1)
        default:
            return 0
        }
    }

    /// Doubles in Firestore's order: NaN first and equal to itself; -0.0 equals 0.0.
    public static func compareDoubles(_ x: Double, _ y: Double) -> Int {
        if x.isNaN { return y.isNaN ? 0 : -1 }
        if y.isNaN { return 1 }
        return x < y ? -1 : (x > y ? 1 : 0)
    }

    /// An integer against a double, exactly (no rounding of large integers).
    public static func compareIntDouble(_ i: Int64, _ d: Double) -> Int {
        if d.isNaN { return 1 }
        if d >= 9_223_372_036_854_775_808.0 { return -1 }
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let floor = d.rounded(.down)
        let t = Int64(floor)
        if i != t { return i < t ? -1 : 1 }
        return d > floor ? -1 : 0
    }
}

/// Compares two strings by their UTF-8 bytes (Firestore's string order). Returns -1, 0 or 1.
public func compareUTF8(_ a: String, _ b: String) -> Int {
    var a = a, b = b
    return a.withUTF8 { x in b.withUTF8 { y in compareBuffers(x, y) } }
}

/// True when two strings are the same UTF-8 bytes. Swift's `==` also equates canonically equivalent
/// strings (`é` as one code point or as `e` and a combining accent), which Firestore, and the store's keys,
/// tell apart.
public func sameUTF8(_ a: String, _ b: String) -> Bool {
    // The same representation (the same short string held inline, or the same storage) is the same bytes.
    if withUnsafeBytes(of: a, { x in withUnsafeBytes(of: b) { y in x.elementsEqual(y) } }) { return true }
    guard a.utf8.count == b.utf8.count else { return false }
    return compareUTF8(a, b) == 0
}

/// Hashes a string's UTF-8 bytes, agreeing with `sameUTF8`.
public func hashUTF8(_ s: String, into hasher: inout Hasher) {
    var s = s
    s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    hasher.combine(0xFF as UInt8)
}

/// True when `a` sorts before `b` by UTF-8 bytes.
public func utf8Less(_ a: String, _ b: String) -> Bool { compareUTF8(a, b) < 0 }

func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in compareBuffers(x, y) } }
}

@inline(__always)
func compareBuffers(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
    let n = min(x.count, y.count)
    if n > 0 {
        let c = memcmp(x.baseAddress!, y.baseAddress!, n)
        if c != 0 { return c < 0 ? -1 : 1 }
    }
    return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
