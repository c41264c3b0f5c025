import HearthClient
import HearthCore

extension Document {
    /// Reads a document of an event, in the document API's wire form; `null` or absent is nil.
    init?(eventJSON json: JSON?) throws(FunctionsError) {
        guard let json, json != .null else { return nil }
        do {
            guard let raw = json["path"]?.stringValue else { throw FunctionsError.event("a document of the event has no 'path'") }
            let path = try DocumentPath(raw)
            let fields = try Value.decodeFields(json["data"] ?? .object([]))
            let created = json["createTime"]?.stringValue.flatMap { Timestamp(rfc3339: $0) } ?? Timestamp(microseconds: 0)
            let updated = json["updateTime"]?.stringValue.flatMap { Timestamp(rfc3339: $0) } ?? created
            self.init(path: path, fields: fields, createTime: created, updateTime: updated)
        } catch let error as FunctionsError {
            throw error
        } catch {
            throw FunctionsError.event("a document of the event cannot be read: \(error)")
        }
    }

    /// The document's fields decoded as `T` (a `Codable` struct of yours) by the client's `DocumentDecoder`,
    /// as a client's `DocumentSnapshot.data(as:)` decodes them (a `@DocumentID` gets the document's id).
    public func data<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try DocumentDecoder().decode(T.self, from: fields, path: path.description)
    }
}
