import Foundation
import HearthClient
import HearthCore

/// One write of a handler's answer, in the `/v1/commit` format (docs/api.md, Commits), built by the same code
/// as the client's writes. Hearth commits an answer's writes as the admin, with the event's delivery mark, so
/// they happen exactly once.
public struct FunctionWrite: Sendable {
    /// The document written.
    public let path: String
    /// The write in the commit format, without its precondition.
    let json: JSON
    let precondition: Precondition?

    /// Replaces the document (or creates it); with `merge`, changes only the fields given.
    public static func set(_ path: String, _ fields: [String: FieldValue], merge: Bool = false) -> FunctionWrite {
        set(path, pairs: FieldValue.pairs(fields), merge: merge)
    }

    /// Replaces the document with an `Encodable` value of yours, encoded as the client's `setData(from:)`
    /// encodes it (`DocumentEncoder`); with `merge`, changes only the fields it has.
    public static func set(_ path: String, encoding value: some Encodable, merge: Bool = false) throws -> FunctionWrite {
        set(path, pairs: try DocumentEncoder().wireFields(value), merge: merge)
    }

    private static func set(_ path: String, pairs: [(String, JSON)], merge: Bool) -> FunctionWrite {
        FunctionWrite(path: path, json: WriteBuilder.set(path, fields: pairs, merge: merge ? .all : .none), precondition: nil)
    }

    /// Creates the document; the commit fails if it exists.
    public static func create(_ path: String, _ fields: [String: FieldValue]) -> FunctionWrite {
        FunctionWrite(path: path, json: WriteBuilder.create(path, fields: FieldValue.pairs(fields)), precondition: nil)
    }

    /// Creates the document from an `Encodable` value; the commit fails if it exists.
    public static func create(_ path: String, encoding value: some Encodable) throws -> FunctionWrite {
        FunctionWrite(path: path, json: WriteBuilder.create(path, fields: try DocumentEncoder().wireFields(value)), precondition: nil)
    }

    /// Changes the fields named (keys are field paths: `"address.city"`) of an existing document; the commit
    /// fails if it is missing.
    public static func update(_ path: String, _ fields: [String: FieldValue]) -> FunctionWrite {
        FunctionWrite(path: path, json: WriteBuilder.update(path, fields: FieldValue.pairs(fields)), precondition: nil)
    }

    /// Deletes the document (nothing happens if it is missing, unless a precondition says otherwise).
    public static func delete(_ path: String) -> FunctionWrite {
        FunctionWrite(path: path, json: WriteBuilder.delete(path), precondition: nil)
    }

    /// Checks a precondition only: the whole commit fails if it does not hold.
    public static func verify(_ path: String, _ precondition: Precondition) -> FunctionWrite {
        FunctionWrite(path: path, json: WriteBuilder.verify(path), precondition: precondition)
    }

    /// The same write, applied only if the document exists (or not), or has this update time.
    public func precondition(_ precondition: Precondition) -> FunctionWrite {
        FunctionWrite(path: path, json: json, precondition: precondition)
    }

    /// An answer's body: `{"writes": [...]}`.
    public static func answer(_ writes: [FunctionWrite]) -> [UInt8] {
        let items = writes.map { write in write.precondition.map { WriteBuilder.write(write.json, precondition: $0) } ?? write.json }
        return JSON.object([("writes", .array(items))]).serialized()
    }
}
