import Foundation
import HearthCore

/// A document as read (or as a live update left it): its fields, or none when it does not exist.
public struct DocumentSnapshot: Sendable {
    /// Where the document is.
    public let reference: DocumentReference
    let fields: [String: Value]?
    /// When the document was created, and last changed (its version); nil when it does not exist.
    public let createTime: Timestamp?
    public let updateTime: Timestamp?

    init(reference: DocumentReference, fields: [String: Value]?, createTime: Timestamp?, updateTime: Timestamp?) {
        self.reference = reference
        self.fields = fields
        self.createTime = createTime
        self.updateTime = updateTime
    }

    /// A document from its wire form (`{"path", "id", "data", "createTime", "updateTime"}`).
    init(hearth: Hearth, json: JSON) throws(HearthClientError) {
        guard let path = json["path"]?.stringValue else { throw .decoding("a document without a path") }
        reference = hearth.document(path)
        fields = try Wire.fields(json["data"] ?? .object([]), of: path)
        createTime = json["createTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
        updateTime = json["updateTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
    }

    /// The document's id.
    public var documentID: String { reference.documentID }
    /// Whether the document exists.
    public var exists: Bool { fields != nil }

    /// The fields, or nil when the document does not exist.
    public func data() -> [String: Value]? { fields }

    /// One field's value by field path (`address.city`), or nil when absent.
    public func get(_ field: String) -> Value? {
        guard let fields, let path = try? FieldPath(parsing: field) else { return nil }
        return fields[path: path]
    }

    /// The fields decoded into a `Decodable` type; `not-found` when the document does not exist.
    public func data<T: Decodable>(as type: T.Type) throws(HearthClientError) -> T {
        guard let fields else { throw HearthClientError(code: .notFound, message: "document \(reference.path) does not exist") }
        return try HearthDecoder(documentPath: reference.path, hearth: reference.hearth).decode(type, from: .map(fields))
    }
}

/// How a document changed between two snapshots of a query.
public struct DocumentChange: Sendable {
    public enum ChangeType: String, Sendable { case added, modified, removed }

    public var type: ChangeType
    /// The document after the change (before it, for `removed`).
    public var document: DocumentSnapshot
    /// Its position before the change (earlier changes applied), -1 if it was not in the result.
    public var oldIndex: Int
    /// Its position after the change, -1 if it left the result.
    public var newIndex: Int
}

/// A query's result: from `getDocuments`, or a live update (with the changes since the previous one).
public struct QuerySnapshot: Sendable {
    /// The documents, in the query's order.
    public var documents: [DocumentSnapshot]
    /// The changes since the previous snapshot of the same listener (every document as `added` for the
    /// first, and for a get).
    public var documentChanges: [DocumentChange]
    /// The moment the result is of.
    public var readTime: Timestamp?
    /// True when the server could not resume from the last position and sent the whole result again
    /// (`reset`): `documentChanges` then start from an empty result.
    public var isReset: Bool

    public var isEmpty: Bool { documents.isEmpty }
    public var count: Int { documents.count }
}
