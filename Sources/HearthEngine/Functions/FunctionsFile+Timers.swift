import HearthCore

/// Timers: a document whose timestamp field a timer watches arms it, in the commit that writes the field;
/// a change of the field re-arms it, and a field that goes or stops being a timestamp (or the document going)
/// drops it. A write that leaves the field as it was leaves the timer as it is (fired or not).
extension FunctionsFile {
    /// The timestamp a timer sees in a document: nil when the field is missing or not a timestamp.
    static func timerTime(_ timer: Timer, in document: Document?) -> Timestamp? {
        guard let document, case .timestamp(let time)? = Query.value(of: timer.field, in: document) else { return nil }
        return time
    }

    /// Whether a change to the document at `path` may arm or drop a timer (a timer's path matches it).
    public func armsTimers(_ path: DocumentPath) -> Bool {
        timers.contains { $0.path.matches(path.segments) }
    }

    /// Arms, re-arms or drops the timers a change to one document touches, in the write job's transaction.
    func armTimers(path: DocumentPath, before: Document?, after: Document?, in context: any DocumentWriter) throws {
        for timer in timers where timer.path.match(path.segments) != nil {
            let old = before.flatMap { Query.value(of: timer.field, in: $0) }
            let new = after.flatMap { Query.value(of: timer.field, in: $0) }
            guard old != new else { continue }
            let due = Self.timerTime(timer, in: after)
            guard due != nil || Self.timerTime(timer, in: before) != nil else { continue }
            try context.setFunctionTimer(name: timer.name, path: path.description, due: due)
        }
    }

    /// The event of a timer that came due, or nil when it no longer applies (the timer is gone from the file,
    /// its path no longer matches, or the document's field no longer holds that time). The body is
    /// `{"id", "type": "timer", "name", "time", "params", "document": {"path", "after"}}`, `time` the time it
    /// was due and `after` the document as it is when the timer fires.
    func timerEvent(_ record: FunctionTimerRecord, document: Document?, queuedAt: Timestamp,
                    makeID: () -> String) -> FunctionEventRecord? {
        guard let timer = timers.first(where: { $0.name == record.name }), let document,
              let params = timer.path.match(document.path.segments),
              Self.timerTime(timer, in: document) == record.dueAt else { return nil }
        let id = makeID()
        var w = JSONWriter()
        Self.writeHead(id: id, type: "timer", name: timer.name, time: record.dueAt, params: params, to: &w)
        w.raw(",\"document\":{\"path\":")
        w.string(record.path)
        w.raw(",\"after\":")
        document.write(to: &w)
        w.raw("}}")
        return FunctionEventRecord(id: id, endpoint: timer.endpoint, orderingKey: "\(timer.endpoint)/document/\(record.path)",
                                   body: w.bytes, createdAt: queuedAt)
    }
}
