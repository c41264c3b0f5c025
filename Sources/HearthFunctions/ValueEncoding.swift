import Foundation
import HearthCore

/// Encodes your `Encodable` values as document data with Foundation's `JSONEncoder`: `Date` becomes a
/// timestamp and `Data` bytes; numbers, strings, bools, arrays and nested structs are themselves (a whole
/// `Double` such as `3.0` is written as `3` by `JSONEncoder` and stored as an integer, as Firebase's web SDK does; NaN and infinities are refused: write them
/// with `FieldValue.value(.double(...))`).
public enum ValueEncoding {
    /// The JSON object of `value`'s fields, in the wire encoding.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.container(keyedBy: TagKey.self)
            let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
            try container.encode(Timestamp(microseconds: micros).rfc3339, forKey: TagKey(stringValue: "$timestamp"))
        }
        encoder.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.container(keyedBy: TagKey.self)
            try container.encode(data.base64EncodedString(), forKey: TagKey(stringValue: "$bytes"))
        }
        let bytes = Array(try encoder.encode(value))
        guard bytes.first == UInt8(ascii: "{") else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "document data must encode as a JSON object (a struct or a dictionary)"))
        }
        return bytes
    }

    struct TagKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
