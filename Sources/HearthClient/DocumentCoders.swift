import HearthCore

/// Encodes `Encodable` documents as the client writes them (Firestore's `Firestore.Encoder`).
public struct DocumentEncoder: Sendable {
    public init() {}

    /// The document's fields as values; a document holding write sentinels (`FieldValue`, a nil
    /// `@ServerTimestamp`) has no such form and is refused.
    public func encode<T: Encodable>(_ value: T) throws(HearthClientError) -> [String: Value] {
        let pairs = try HearthEncoder().encodeDocument(value)
        var fields: [String: Value] = [:]
        for (key, json) in pairs {
            do { fields[key] = try Value(wire: json, field: key) } catch {
                throw .encoding("field '\(key)' holds a write sentinel or a value that is not one: \(error.message)")
            }
        }
        return fields
    }

    /// The document's data as a write sends it: wire JSON text, sentinels included.
    public func wireText<T: Encodable>(_ value: T) throws(HearthClientError) -> String {
        JSON.object(try wireFields(value)).text
    }

    /// The document's data as a write sends it: its fields in the wire encoding, sentinels included.
    package func wireFields<T: Encodable>(_ value: T) throws(HearthClientError) -> [(String, JSON)] {
        try HearthEncoder().encodeDocument(value)
    }
}

/// Decodes documents' fields into `Decodable` types (Firestore's `Firestore.Decoder`).
public struct DocumentDecoder: Sendable {
    public init() {}

    /// `path` fills a `@DocumentID`; `hearth` makes the `DocumentReference`s of reference fields.
    public func decode<T: Decodable>(_ type: T.Type, from fields: [String: Value], path: String? = nil,
                                     hearth: Hearth? = nil) throws(HearthClientError) -> T {
        try HearthDecoder(documentPath: path, hearth: hearth).decode(type, from: .map(fields))
    }
}
