import Foundation
import HearthCore

/// One event as Hearth delivers it (docs/functions.md, Events): what happened, which entry of the functions
/// file it is for, and what it is about.
public struct FunctionEvent: Sendable {
    /// The event's id: the same on every attempt (`webhook-id`), so a handler can drop a copy it has seen.
    public var id: String
    /// What happened: the trigger's `on` (`document.written`, `user.created`, ...), or the kind of a schedule
    /// or timer.
    public var type: String
    /// The name of the trigger, schedule or timer in the functions file.
    public var name: String
    /// When it happened (the commit time for a document event), as sent.
    public var time: Timestamp?
    /// The path's wildcards, bound: those of the functions file, and the handler's own when its path names
    /// them differently.
    public var params: [String: String]
    /// A document event's (and a timer's) document, before and after.
    public var document: DocumentChange?
    /// A `user.*` event's account.
    public var user: EventObject?
    /// A `file.*` event's object metadata.
    public var file: EventObject?
    /// A schedule's run.
    public var schedule: EventObject?
    /// The short-lived token of the endpoint's `identity`, when the functions file declares one.
    public var auth: EventAuth?
    /// The whole body, parsed, for fields this type does not name.
    public var body: JSON

    /// Reads a delivered body.
    public init(json: JSON) throws(FunctionEventError) {
        guard case .object = json else { throw FunctionEventError("the event body must be a JSON object, got \(json.kind)") }
        body = json
        guard let id = json["id"]?.stringValue else { throw FunctionEventError("the event has no 'id'") }
        guard let type = json["type"]?.stringValue else { throw FunctionEventError("the event has no 'type'") }
        self.id = id
        self.type = type
        name = json["name"]?.stringValue ?? ""
        time = json["time"]?.stringValue.flatMap { Timestamp(rfc3339: $0) }
        params = [:]
        if case .object(let pairs)? = json["params"] {
            for (key, value) in pairs { params[key] = value.stringValue }
        }
        if let value = json["document"], value != .null { document = try DocumentChange(json: value) }
        user = EventObject(json["user"])
        file = EventObject(json["file"])
        schedule = EventObject(json["schedule"])
        if let value = json["auth"], value != .null { auth = try EventAuth(json: value) }
    }

    /// Reads a delivered body from its bytes.
    public init(body: some Collection<UInt8>) throws(FunctionEventError) {
        let json: JSON
        do {
            json = try JSON.parse(body)
        } catch {
            throw FunctionEventError("the event body is not JSON: \(error.message)")
        }
        try self.init(json: json)
    }
}

/// A body that is not an event.
public struct FunctionEventError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(_ message: String) { self.message = message }
}

/// A document event's document: `before` is nil when it was created, `after` when it was deleted.
public struct DocumentChange: Sendable {
    /// The document's path.
    public var path: String
    public var before: Document?
    public var after: Document?

    init(json: JSON) throws(FunctionEventError) {
        guard let path = json["path"]?.stringValue else { throw FunctionEventError("the event's document has no 'path'") }
        self.path = path
        before = try Document(eventJSON: json["before"])
        after = try Document(eventJSON: json["after"])
    }
}

/// The token an endpoint's `identity` gets in each event, for the reads and writes a handler makes itself
/// (`Authorization: Bearer <token>`).
public struct EventAuth: Sendable {
    /// The bearer token.
    public var token: String
    /// Seconds it stays valid from the event's sending, when sent.
    public var expiresIn: Int?

    init(json: JSON) throws(FunctionEventError) {
        guard let token = json["token"]?.stringValue else { throw FunctionEventError("the event's 'auth' has no 'token'") }
        self.token = token
        if case .int(let n)? = json["expiresIn"] { expiresIn = Int(n) } else { expiresIn = nil }
    }
}

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

extension Document {
    /// Reads a document of an event, in the document API's wire form; `null` or absent is nil.
    init?(eventJSON json: JSON?) throws(FunctionEventError) {
        guard let json, json != .null else { return nil }
        do {
            guard let raw = json["path"]?.stringValue else { throw FunctionEventError("a document of the event has no 'path'") }
            let path = try DocumentPath(raw)
            let fields = try Value.decodeFields(json["data"] ?? .object([]))
            let created = json["createTime"]?.stringValue.flatMap { Timestamp(rfc3339: $0) } ?? Timestamp(microseconds: 0)
            let updated = json["updateTime"]?.stringValue.flatMap { Timestamp(rfc3339: $0) } ?? created
            self.init(path: path, fields: fields, createTime: created, updateTime: updated)
        } catch let error as FunctionEventError {
            throw error
        } catch {
            throw FunctionEventError("a document of the event cannot be read: \(error)")
        }
    }

    /// The document's fields decoded as `T` (a `Codable` struct of yours), as `ValueDecoding` describes.
    public func data<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try ValueDecoding.decode(T.self, from: fields)
    }
}
