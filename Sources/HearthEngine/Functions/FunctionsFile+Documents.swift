import HearthCore

extension FunctionsFile {
    /// Whether any trigger watches documents: without one, a commit matches nothing and pays nothing.
    public var watchesDocuments: Bool { triggers.contains { $0.on.isDocument } }

    /// Whether a change to the document at `path` may cause an event (a document trigger's path matches it):
    /// what a commit must change for delivery to look at the queue again.
    public func watches(_ path: DocumentPath) -> Bool {
        triggers.contains { $0.on.isDocument && $0.path?.matches(path.segments) == true }
    }

    /// The events a change to one document causes, as the write job records them: `before` and `after` are
    /// the document as stored before the commit and after it (nil: missing). The body is the event as sent
    /// (`{"id", "type", "name", "time", "params", "document": {"path", "before", "after"}}`).
    public func documentEvents(path: DocumentPath, before: Document?, after: Document?, commitTime: Timestamp,
                               makeID: () -> String) -> [FunctionEventRecord] {
        let kind: Event
        switch (before, after) {
        case (nil, nil): return []
        case (nil, _?): kind = .documentCreated
        case (_?, nil): kind = .documentDeleted
        case (_?, _?): kind = .documentUpdated
        }
        var out: [FunctionEventRecord] = []
        var text: String?
        for trigger in triggers where trigger.on == kind || trigger.on == .documentWritten {
            guard let params = trigger.path?.match(path.segments) else { continue }
            let pathText = text ?? path.description
            text = pathText
            let id = makeID()
            var w = JSONWriter(capacity: 1024)  // the head and a small document's before and after, without growing
            Self.writeHead(id: id, type: trigger.on.rawValue, name: trigger.name, time: commitTime, params: params, to: &w)
            w.raw(",\"document\":{\"path\":")
            w.string(pathText)
            w.raw(",\"before\":")
            if let before { before.write(to: &w) } else { w.raw("null") }
            w.raw(",\"after\":")
            if let after { after.write(to: &w) } else { w.raw("null") }
            w.raw("}}")
            out.append(FunctionEventRecord(id: id, endpoint: trigger.endpoint,
                                           orderingKey: trigger.endpoint + "/document/" + pathText,
                                           body: w.bytes, createdAt: commitTime))
        }
        return out
    }

    /// Writes `{"id", "type", "name", "time", "params"` of an event's body (no `params` when nil); the caller
    /// adds the rest and `}`.
    static func writeHead(id: String, type: String, name: String, time: Timestamp, params: [(String, String)]?,
                          to w: inout JSONWriter) {
        w.raw("{\"id\":")
        w.string(id)
        w.raw(",\"type\":")
        w.string(type)
        w.raw(",\"name\":")
        w.string(name)
        w.raw(",\"time\":\"")
        w.rfc3339(time)
        w.raw("\"")
        guard let params else { return }
        w.raw(",\"params\":{")
        for (k, (key, value)) in params.enumerated() {
            if k > 0 { w.raw(",") }
            w.string(key)
            w.raw(":")
            w.string(value)
        }
        w.raw("}")
    }

    /// A new event id: `evt_` and 20 characters that sort in creation order.
    public static func makeEventID() -> String { "evt_" + AutoIDs.ordered.make() }
}
