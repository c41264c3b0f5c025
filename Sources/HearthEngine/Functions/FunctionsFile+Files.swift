import HearthCore

extension FunctionsFile {
    /// Whether any trigger watches stored objects.
    public var watchesFiles: Bool { triggers.contains { $0.on == .fileFinalized || $0.on == .fileDeleted } }

    /// The events a commit of one object's metadata causes, as Cloud Storage's notifications do: a new object
    /// or a new generation (new bytes) is `file.finalized`; an object deleted, or replaced by a new
    /// generation (there are no older versions to keep), is `file.deleted`, before the replacement's
    /// `file.finalized`; a change of metadata alone causes none. The body carries `"file"`, the metadata as
    /// the file API answers it (the deleted object's for `file.deleted`).
    public func fileEvents(before: StoredFile?, after: StoredFile?, commitTime: Timestamp,
                           makeID: () -> String) -> [FunctionEventRecord] {
        var changes: [(Event, StoredFile)] = []
        if let before, after?.generation != before.generation { changes.append((.fileDeleted, before)) }
        if let after, before?.generation != after.generation { changes.append((.fileFinalized, after)) }
        var out: [FunctionEventRecord] = []
        for (kind, file) in changes {
            let segments = file.path.name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            for trigger in triggers where trigger.on == kind {
                guard let params = trigger.path?.match(segments) else { continue }
                let id = makeID()
                var w = JSONWriter()
                Self.writeHead(id: id, type: kind.rawValue, name: trigger.name, time: commitTime, params: params, to: &w)
                w.raw(",\"file\":")
                file.write(to: &w)
                w.raw("}")
                out.append(FunctionEventRecord(id: id, endpoint: trigger.endpoint,
                                               orderingKey: "\(trigger.endpoint)/file/\(file.path.name)",
                                               body: w.bytes, createdAt: commitTime))
            }
        }
        return out
    }
}

extension Database {
    /// Queues, in the job that commits an object's metadata, the events the file in force makes of it.
    func queueFileEvents(before: StoredFile?, after: StoredFile?, commitTime: Timestamp,
                         in context: any DocumentWriter) throws {
        guard let file = functions.file, file.watchesFiles else { return }
        let events = file.fileEvents(before: before, after: after, commitTime: commitTime, makeID: FunctionsFile.makeEventID)
        if !events.isEmpty { try context.addFunctionEvents(events) }
    }
}
