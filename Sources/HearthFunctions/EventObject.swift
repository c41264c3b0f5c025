import Foundation
import HearthClient
import HearthCore

/// A JSON object of an event (an account, a file's metadata, a schedule's run): read a field, or decode it
/// whole into a `Decodable` type.
public struct EventObject: Sendable {
    /// The object as sent.
    public var json: JSON

    init?(_ json: JSON?) {
        guard let json, case .object = json else { return nil }
        self.json = json
    }

    /// A field of the object.
    public subscript(key: String) -> JSON? { json[key] }

    /// The object decoded as `T` with Foundation's `JSONDecoder`: a date is read from its RFC 3339 text
    /// (or seconds since 1970).
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try Self.decoder().decode(T.self, from: Data(json.serialized()))
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSince1970: seconds) }
            let text = try container.decode(String.self)
            guard let timestamp = Timestamp(rfc3339: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an RFC 3339 timestamp")
            }
            return timestamp.dateValue
        }
        return decoder
    }
}
