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
    public init(json: JSON) throws(FunctionsError) {
        guard case .object = json else { throw FunctionsError.event("the event body must be a JSON object, got \(json.kind)") }
        body = json
        guard let id = json["id"]?.stringValue else { throw FunctionsError.event("the event has no 'id'") }
        guard let type = json["type"]?.stringValue else { throw FunctionsError.event("the event has no 'type'") }
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
    public init(body: some Collection<UInt8>) throws(FunctionsError) {
        let json: JSON
        do {
            json = try JSON.parse(body)
        } catch {
            throw FunctionsError.event("the event body is not JSON: \(error.message)")
        }
        try self.init(json: json)
    }
}
