import Foundation
import HearthCore

/// Decodes document fields into your `Codable` types with Foundation's `JSONDecoder`: each value is given in
/// the form a Swift type reads it from.
///
/// | value | reads as |
/// |---|---|
/// | integer, double, string, bool, null, array, map | themselves (`Int`, `Double`, `String`, ..., a nested struct) |
/// | timestamp | `Date` (or its RFC 3339 text as `String`) |
/// | bytes | `Data` (or its base64 as `String`) |
/// | reference | its path, as `String` |
/// | geopoint | `{"latitude", "longitude"}` (a struct with those two `Double`s) |
public enum ValueDecoding {
    /// Decodes `fields` as `T`.
    public static func decode<T: Decodable>(_ type: T.Type, from fields: [String: Value]) throws -> T {
        try decoder().decode(T.self, from: Data(plain(.map(fields)).serialized()))
    }

    /// A `JSONDecoder` that reads dates as RFC 3339 with any number of fractional digits, and non-finite
    /// doubles from `NaN`, `Infinity` and `-Infinity`.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSince1970: seconds) }
            let text = try container.decode(String.self)
            guard let timestamp = Timestamp(rfc3339: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an RFC 3339 timestamp")
            }
            return Date(timeIntervalSince1970: Double(timestamp.microseconds) / 1_000_000)
        }
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "Infinity",
                                                                        negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }

    /// A value as plain JSON, in the forms the table above gives.
    static func plain(_ value: Value) -> JSON {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d):
            if d.isNaN { return .string("NaN") }
            if d.isInfinite { return .string(d > 0 ? "Infinity" : "-Infinity") }
            return .double(d)
        case .timestamp(let t): return .string(t.rfc3339)
        case .string(let s): return .string(s)
        case .bytes(let b): return .string(Base64.encode(b))
        case .reference(let path): return .string(path.description)
        case .geoPoint(let g): return .object([("latitude", .double(g.latitude)), ("longitude", .double(g.longitude))])
        case .array(let items): return .array(items.map(plain))
        case .map(let fields): return .object(fields.sorted { $0.key < $1.key }.map { ($0.key, plain($0.value)) })
        }
    }
}
