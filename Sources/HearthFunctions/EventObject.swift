import Foundation
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

    /// The object decoded as `T`, values in their wire encoding read as `ValueDecoding` describes.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try ValueDecoding.decoder().decode(T.self, from: Data(json.serialized()))
    }
}
