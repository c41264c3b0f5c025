import HearthCore

/// A document event's document: `before` is nil when it was created, `after` when it was deleted.
public struct DocumentChange: Sendable {
    /// The document's path.
    public var path: String
    /// The document before the commit; nil when the commit created it.
    public var before: Document?
    /// The document after the commit; nil when the commit deleted it.
    public var after: Document?

    init(json: JSON) throws(FunctionsError) {
        guard let path = json["path"]?.stringValue else { throw FunctionsError.event("the event's document has no 'path'") }
        self.path = path
        before = try Document(eventJSON: json["before"])
        after = try Document(eventJSON: json["after"])
    }
}
