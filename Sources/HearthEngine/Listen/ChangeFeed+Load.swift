import HearthCore
import HearthStore

/// A read of a view's result, asked by the feed's loop and run on a reader thread.
struct LoadRequest: Sendable {
    let view: Int
    /// Which load of the view this is; a result of an earlier load is stale.
    let generation: Int
    let target: ListenTarget
    /// Whether the target's document cursors still need resolving (only its first load).
    let resolveCursors: Bool
    /// For a resumed target: the position the client's view reflects.
    let resume: LogPosition?
}

/// A view's result read at a position.
struct LoadResult: Sendable {
    let position: LogPosition
    let target: ListenTarget
    let current: [Document]
    /// For a resume: the result at the resume position, or nil when the log no longer reaches back to it.
    let previous: [Document]?
}

extension ChangeFeed {
    /// Reads a target's result (and, to resume, its result at the resume position) inside one read transaction.
    static func load(_ request: LoadRequest, context: ReadContext, at position: LogPosition) throws -> LoadResult {
        var target = request.target
        if request.resolveCursors, case .query(let query) = target {
            target = .query(try query.resolvingCursors { path in try? context.document(at: path)?.decoded() })
        }
        let stored: [StoredDocument]
        switch target {
        case .document(let path):
            stored = try context.document(at: path).map { [$0] } ?? []
        case .query(let query):
            switch query.source {
            case .collection(let c): stored = try context.documents(in: c, after: nil, limit: Int.max)
            case .collectionGroup(let id, let under): stored = try context.documents(inGroup: id, under: under)
            }
        }
        var docs: [DocumentPath: Document] = [:]
        for s in stored { docs[s.path] = try s.decoded() }
        let view = TargetView(target: target)
        let current = view.result(over: Array(docs.values))
        var previous: [Document]?
        if let resume = request.resume, let before = try documents(docs, of: target, at: resume, from: position, context) {
            previous = view.result(over: Array(before.values))
        }
        return LoadResult(position: position, target: target, current: current, previous: previous)
    }

    /// The target's documents as they were at an earlier position, undoing the logged changes since; nil when
    /// the log no longer holds what that takes.
    static func documents(_ docs: [DocumentPath: Document], of target: ListenTarget, at resume: LogPosition,
                          from position: LogPosition, _ context: ReadContext) throws -> [DocumentPath: Document]? {
        if resume.sequence == position.sequence { return docs }
        guard resume.sequence < position.sequence, let oldest = try context.oldestRetainedSequence(),
              oldest <= resume.sequence + 1 else { return nil }
        if let row = try context.change(atSequence: resume.sequence), row.commitTime != resume.commitTime {
            return nil  // a token of another database, or of a log since rebuilt
        }
        var firstChange: [DocumentPath: ChangeRecord] = [:]
        for record in try context.changes(after: resume.sequence, through: position.sequence)
        where target.concerns(record.path) && firstChange[record.path] == nil {
            firstChange[record.path] = record
        }
        var out = docs
        for (path, first) in firstChange {
            if let before = try context.lastChange(to: path, atOrBefore: resume.sequence) {
                out[path] = try before.document?.decoded()
            } else if oldest == 1 || first.document.map({ $0.createTime == first.commitTime }) == true {
                // Never logged before: the first change created it (the log is whole, or it says so).
                out[path] = nil
            } else {
                return nil
            }
        }
        return out
    }
}
