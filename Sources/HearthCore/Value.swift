/// A latitude/longitude pair.
public struct GeoPoint: Sendable, Hashable {
    /// Degrees north, in [-90, 90].
    public var latitude: Double
    /// Degrees east, in [-180, 180].
    public var longitude: Double

    /// Makes a geopoint; callers validate the ranges (`Value.validate`).
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A typed value stored in a document field (Firestore's value types).
public enum Value: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case timestamp(Timestamp)
    case string(String)
    case bytes([UInt8])
    /// A reference to a document, held as its path (`users/alice`).
    case reference(DocumentPath)
    case geoPoint(GeoPoint)
    case array([Value])
    case map([String: Value])

    /// The type's rank in Firestore's cross-type order (numbers share one rank).
    public var typeOrder: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .double: return 2
        case .timestamp: return 3
        case .string: return 4
        case .bytes: return 5
        case .reference: return 6
        case .geoPoint: return 7
        case .array: return 8
        case .map: return 9
        }
    }

    /// The type's name, as used in error messages and rules (`int`, `float`, `string`, ...).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "float"
        case .timestamp: return "timestamp"
        case .string: return "string"
        case .bytes: return "bytes"
        case .reference: return "path"
        case .geoPoint: return "latlng"
        case .array: return "list"
        case .map: return "map"
        }
    }

    /// True for integers and doubles.
    public var isNumber: Bool {
        switch self {
        case .int, .double: return true
        default: return false
        }
    }

    /// True for a double NaN.
    public var isNaN: Bool {
        if case .double(let d) = self { return d.isNaN }
        return false
    }

    /// The map's fields, or nil for any other type.
    public var mapValue: [String: Value]? {
        if case .map(let m) = self { return m }
        return nil
    }

    /// The array's elements, or nil for any other type.
    public var arrayValue: [Value]? {
        if case .array(let a) = self { return a }
        return nil
    }
}

extension Value: Equatable, Hashable {
    /// Identity, not query equality: `1` and `1.0` differ, NaN equals NaN, `0.0` and `-0.0` differ,
    /// strings compare by their UTF-8 bytes. Query equality is `Value.compare(a, b) == 0`.
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.reference(let x), .reference(let y)): return x == y
        case (.geoPoint(let x), .geoPoint(let y)):
            return x.latitude.bitPattern == y.latitude.bitPattern && x.longitude.bitPattern == y.longitude.bitPattern
        case (.array(let x), .array(let y)): return x == y
        case (.map(let x), .map(let y)): return x == y
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(typeOrder)
        switch self {
        case .null: break
        case .bool(let v): hasher.combine(v)
        case .int(let v): hasher.combine(v)
        case .double(let v): hasher.combine(v.isNaN ? Double.nan.bitPattern : v.bitPattern)
        case .timestamp(let v): hasher.combine(v)
        case .string(let v): hasher.combine(v.utf8.count); for b in v.utf8 { hasher.combine(b) }
        case .bytes(let v): hasher.combine(v)
        case .reference(let v): hasher.combine(v)
        case .geoPoint(let v): hasher.combine(v.latitude.bitPattern); hasher.combine(v.longitude.bitPattern)
        case .array(let v): hasher.combine(v)
        case .map(let v): hasher.combine(v)
        }
    }
}
