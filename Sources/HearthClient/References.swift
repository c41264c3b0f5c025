import Foundation
import HearthCore
import NIOHTTP1

/// A document's place (`posts/p1`): read, written and listened to through it. Cheap to make; nothing is
/// fetched until a call.
public struct DocumentReference: Sendable, Hashable, Codable {
    let hearth: Hearth
    /// The document's path.
    public let path: String

    init(hearth: Hearth, path: String) {
        precondition(path.split(separator: "/").count % 2 == 0 && !path.isEmpty,
                     "'\(path)' is not a document path (a document path has an even number of segments)")
        self.hearth = hearth
        self.path = path
    }

    public static func == (a: DocumentReference, b: DocumentReference) -> Bool { a.hearth === b.hearth && a.path == b.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    /// Hearth's coders read a reference value; other decoders cannot make one (it needs its client).
    public init(from decoder: any Decoder) throws {
        guard let hearth = decoder.userInfo[HearthDecoder.hearthKey] as? Hearth else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a reference decodes only from a Hearth document"))
        }
        self = hearth.document(try decoder.singleValueContainer().decode(String.self))
    }

    /// Outside Hearth's coders a reference is its path.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(path)
    }

    /// The document's id (the last segment).
    public var documentID: String { String(path.split(separator: "/").last!) }

    /// The collection the document is in.
    public var parent: CollectionReference {
        CollectionReference(hearth: hearth, path: path.split(separator: "/").dropLast().joined(separator: "/"))
    }

    /// A subcollection of the document.
    public func collection(_ collectionPath: String) -> CollectionReference {
        CollectionReference(hearth: hearth, path: path + "/" + Hearth.trimmed(collectionPath))
    }

    var apiPath: String { Transport.encodedPath("/v1/docs/", path) }

    /// Reads the document (a snapshot whose `exists` is false when it is missing).
    public func getDocument() async throws(HearthClientError) -> DocumentSnapshot {
        try await getDocument(transaction: nil)
    }

    func getDocument(transaction: String?) async throws(HearthClientError) -> DocumentSnapshot {
        do throws(HearthClientError) {
            let answer = try await hearth.call(.GET, apiPath, query: transaction.map { [("transaction", $0)] } ?? [])
            guard let body = answer.body else { throw HearthClientError.decoding("GET \(path) answered no document") }
            return try DocumentSnapshot(hearth: hearth, json: body)
        } catch {
            guard error.code == .notFound, error.status == 404 else { throw error }
            return DocumentSnapshot(reference: self, fields: nil, createTime: nil, updateTime: nil)
        }
    }

    /// Reads the document into a `Decodable` type; a missing document is `not-found`.
    public func getDocument<T: Decodable>(as type: T.Type) async throws(HearthClientError) -> T {
        try await getDocument().data(as: type)
    }

    /// Replaces the document with these fields (or, with `merge`, sets only the fields given), creating it if
    /// missing. Values: see `Wire.json(any:)` (strings, numbers, `Date`, `Data`, `GeoPoint`, `FieldValue`, ...).
    public func setData(_ data: [String: Any], merge: Bool = false) async throws(HearthClientError) {
        try await hearth.commit([try WriteBuilder.set(path, fields: Wire.pairs(data, at: nil), merge: merge ? .all : .none)])
    }

    /// Sets only the fields named (Firestore's `mergeFields`), from the data given.
    public func setData(_ data: [String: Any], mergeFields: [String]) async throws(HearthClientError) {
        try await hearth.commit([try WriteBuilder.set(path, fields: Wire.pairs(data, at: nil), merge: .fields(mergeFields))])
    }

    /// Replaces the document with an `Encodable` value (or merges it in).
    public func setData<T: Encodable>(from value: T, merge: Bool = false) async throws(HearthClientError) {
        try await hearth.commit([try WriteBuilder.set(path, fields: HearthEncoder().encodeDocument(value), merge: merge ? .all : .none)])
    }

    /// Sets only the fields named of an `Encodable` value.
    public func setData<T: Encodable>(from value: T, mergeFields: [String]) async throws(HearthClientError) {
        try await hearth.commit([try WriteBuilder.set(path, fields: HearthEncoder().encodeDocument(value), merge: .fields(mergeFields))])
    }

    /// Updates fields of an existing document (`not-found` if it is missing): each key is a field path
    /// (`address.city`; backticks quote a name with dots) whose value replaces that field whole.
    public func updateData(_ fields: [String: Any]) async throws(HearthClientError) {
        try await hearth.commit([try WriteBuilder.update(path, fields: fields)])
    }

    /// Deletes the document (fine when it is missing; its subcollections stay).
    public func delete() async throws(HearthClientError) {
        try await hearth.commit([WriteBuilder.delete(path)])
    }

    /// Live snapshots of the document: the first as it is, then one per change, reconnecting and resuming by
    /// itself when the connection drops (docs/client.md, Live updates).
    public func snapshots() -> AsyncThrowingStream<DocumentSnapshot, any Error> {
        let reference = self
        return Listener.stream(hearth: hearth, target: .object([("doc", .string(path))])) { view in
            view.documents.first ?? DocumentSnapshot(reference: reference, fields: nil, createTime: nil, updateTime: nil)
        }
    }
}

/// A collection's place (`posts`, `users/alice/notes`): the documents in it, and queries of them.
public struct CollectionReference: Sendable, QueryBuilding {
    let hearth: Hearth
    /// The collection's path.
    public let path: String

    init(hearth: Hearth, path: String) {
        precondition(path.split(separator: "/").count % 2 == 1,
                     "'\(path)' is not a collection path (a collection path has an odd number of segments)")
        self.hearth = hearth
        self.path = path
    }

    /// The collection's id (the last segment).
    public var collectionID: String { String(path.split(separator: "/").last!) }

    /// The document the collection is under, or nil at the root.
    public var parent: DocumentReference? {
        let segments = path.split(separator: "/")
        return segments.count > 1 ? DocumentReference(hearth: hearth, path: segments.dropLast().joined(separator: "/")) : nil
    }

    /// A document of the collection.
    public func document(_ documentID: String) -> DocumentReference {
        DocumentReference(hearth: hearth, path: path + "/" + documentID)
    }

    /// A document with a new random id (20 characters, as Firestore's clients make them); nothing is written.
    public func document() -> DocumentReference { document(makeAutoID()) }

    /// Creates a document with an id the server chooses (`POST`), and answers its reference.
    @discardableResult
    public func addDocument(data: [String: Any]) async throws(HearthClientError) -> DocumentReference {
        try await add(.object(try Wire.pairs(data, at: nil)))
    }

    /// Creates a document from an `Encodable` value with an id the server chooses.
    @discardableResult
    public func addDocument<T: Encodable>(from value: T) async throws(HearthClientError) -> DocumentReference {
        try await add(.object(try HearthEncoder().encodeDocument(value)))
    }

    private func add(_ data: JSON) async throws(HearthClientError) -> DocumentReference {
        let answer = try await hearth.call(.POST, Transport.encodedPath("/v1/docs/", path), body: data)
        guard let created = answer.body?["path"]?.stringValue else { throw .decoding("POST \(path) answered no path") }
        return hearth.document(created)
    }

    /// The collection as a query of all its documents.
    public var query: Query { Query(hearth: hearth, source: .collection(path)) }
}
