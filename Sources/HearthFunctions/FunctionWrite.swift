import Foundation
import HearthCore

/// One write of a handler's answer, in the `/v1/commit` format (docs/api.md, Commits). Hearth commits an
/// answer's writes as the admin, with the event's delivery mark, so they happen exactly once.
public struct FunctionWrite: Sendable {
    enum Operation: Sendable {
        case set(merge: Bool)
        case create
        case update
        case delete
        case verify
    }

    let operation: Operation
    /// The document written.
    public let path: String
    let fields: [String: FieldValue]?
    /// The fields given as JSON already (from an `Encodable` value).
    let encoded: [UInt8]?
    let precondition: Precondition?

    /// Replaces the document (or creates it); with `merge`, changes only the fields given.
    public static func set(_ path: String, _ fields: [String: FieldValue], merge: Bool = false) -> FunctionWrite {
        FunctionWrite(operation: .set(merge: merge), path: path, fields: fields, encoded: nil, precondition: nil)
    }

    /// Replaces the document with an `Encodable` value of yours (see `ValueEncoding` for how Swift values map
    /// to Hearth's); with `merge`, changes only the fields it has.
    public static func set(_ path: String, encoding value: some Encodable, merge: Bool = false) throws -> FunctionWrite {
        FunctionWrite(operation: .set(merge: merge), path: path, fields: nil, encoded: try ValueEncoding.encode(value),
                      precondition: nil)
    }

    /// Creates the document; the commit fails if it exists.
    public static func create(_ path: String, _ fields: [String: FieldValue]) -> FunctionWrite {
        FunctionWrite(operation: .create, path: path, fields: fields, encoded: nil, precondition: nil)
    }

    /// Creates the document from an `Encodable` value; the commit fails if it exists.
    public static func create(_ path: String, encoding value: some Encodable) throws -> FunctionWrite {
        FunctionWrite(operation: .create, path: path, fields: nil, encoded: try ValueEncoding.encode(value), precondition: nil)
    }

    /// Changes the fields named (keys are field paths: `"address.city"`) of an existing document; the commit
    /// fails if it is missing.
    public static func update(_ path: String, _ fields: [String: FieldValue]) -> FunctionWrite {
        FunctionWrite(operation: .update, path: path, fields: fields, encoded: nil, precondition: nil)
    }

    /// Deletes the document (nothing happens if it is missing, unless a precondition says otherwise).
    public static func delete(_ path: String) -> FunctionWrite {
        FunctionWrite(operation: .delete, path: path, fields: nil, encoded: nil, precondition: nil)
    }

    /// Checks a precondition only: the whole commit fails if it does not hold.
    public static func verify(_ path: String, _ precondition: Precondition) -> FunctionWrite {
        FunctionWrite(operation: .verify, path: path, fields: nil, encoded: nil, precondition: precondition)
    }

    /// The same write, applied only if the document exists (or not), or has this update time.
    public func precondition(_ precondition: Precondition) -> FunctionWrite {
        FunctionWrite(operation: operation, path: path, fields: fields, encoded: encoded, precondition: precondition)
    }

    func write(to w: inout JSONWriter) {
        let verb: String
        switch operation {
        case .set: verb = "set"
        case .create: verb = "create"
        case .update: verb = "update"
        case .delete: verb = "delete"
        case .verify: verb = "verify"
        }
        w.raw("{")
        w.string(verb)
        w.raw(":")
        w.string(path)
        if let encoded {
            w.raw(",\"data\":")
            w.raw(encoded)
        } else if let fields {
            w.raw(",\"data\":")
            FieldValue.write(fields, to: &w)
        }
        if case .set(merge: true) = operation { w.raw(",\"merge\":true") }
        switch precondition {
        case nil: break
        case .exists(let exists)?: w.raw(",\"precondition\":{\"exists\":\(exists)}")
        case .updateTime(let time)?:
            w.raw(",\"precondition\":{\"updateTime\":")
            w.string(time.rfc3339)
            w.raw("}")
        }
        w.raw("}")
    }

    /// An answer's body: `{"writes": [...]}`.
    public static func answer(_ writes: [FunctionWrite]) -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"writes\":[")
        for (i, write) in writes.enumerated() {
            if i > 0 { w.raw(",") }
            write.write(to: &w)
        }
        w.raw("]}")
        return w.bytes
    }
}
