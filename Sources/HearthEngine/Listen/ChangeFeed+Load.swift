import HearthCore

/// A read of a view's result, asked by the feed's loop and run on a reader thread.
struct LoadRequest: Sendable {
    let view: Int
    /// Which load of the view this is; a result of an earlier load is stale.
    let generation: Int
    /// The target, its cursors resolved when it was admitted (`ListenAuthorizer.admitTarget`).
    let target: ListenTarget
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
    /// A query is served by the field index, as `POST /v1/query` is, never by reading its whole collection.
    static func load(_ request: LoadRequest, context: any DocumentReader, at position: LogPosition) throws -> LoadResult {
        let target = request.target
        let view = TargetView(target: target)
        // The states at the resume position of the documents changed since; nil when the log no longer says.
        let undone = try request.resume.flatMap { resume in
            try changesUndone(since: resume, upTo: position, concerning: target, context)
        }
        let read: [Document]
        switch target {
        case .document(let path):
            read = try context.document(at: path).map { [try $0.decoded()] } ?? []
        case .query(var query):
            // The view matches and orders whole documents; it projects them when it delivers.
            query.select = nil
            guard let undone else {
                return LoadResult(position: position, target: target, current: try context.queryDocuments(query),
                                  previous: nil)
            }
            read = try context.queryDocuments(widened(query, byChanged: undone.count))
        }
        var previous: [Document]?
        if let undone {
            var before: [DocumentPath: Document] = [:]
            for doc in read { before[doc.path] = doc }
            for (path, state) in undone { before[path] = state }
            previous = view.result(over: Array(before.values))
        }
        return LoadResult(position: position, target: target, current: view.result(over: read), previous: previous)
    }

    /// The query to read when resuming: one whose result holds both the result now and every document of the
    /// result at the resume position that has not changed since, with `changed` documents changed in between.
    ///
    /// Between the two positions only the changed documents can have entered or left the query's matches, so
    /// an unchanged document's rank among the matches moved by at most `changed`. With offset `o` and limit
    /// (or limit-to-last) `n`, every unchanged document of the earlier window, at a rank below `o + n` then,
    /// is among the first `o + n + changed` matches now (counted from the limit's end). Reading those, and
    /// putting the changed documents back as they were (from the log), gives documents that all matched then
    /// and include the first `o + n` of them, so running the query over them gives the earlier result
    /// exactly; and since they hold the first `o + n` matches now, the current result too. A document
    /// pushed out of the window since the token (a newer one sorted before it) is found this way, which
    /// reading only the current window would miss. An unlimited query reads all its matches.
    static func widened(_ query: Query, byChanged changed: Int) -> Query {
        var wide = query
        wide.offset = 0
        guard let n = query.limit ?? query.limitToLast else { return wide }
        let (partial, overflow1) = n.addingReportingOverflow(query.offset)
        let (window, overflow2) = partial.addingReportingOverflow(changed)
        let bound: Int? = overflow1 || overflow2 ? nil : window
        if query.limitToLast != nil {
            wide.limitToLast = bound
        } else {
            wide.limit = bound
        }
        return wide
    }

    /// For each document of the target changed after `resume` (up to `position`), its state at `resume`
    /// (nil when it did not exist then), from the change log; empty when nothing changed, nil when the log no
    /// longer reaches back to `resume` or the token is not from this log.
    static func changesUndone(since resume: LogPosition, upTo position: LogPosition, concerning target: ListenTarget,
                              _ context: any DocumentReader) throws -> [DocumentPath: Document?]? {
        if resume.sequence == position.sequence { return [:] }
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
        var out: [DocumentPath: Document?] = [:]
        for (path, first) in firstChange {
            if let before = try context.lastChange(to: path, atOrBefore: resume.sequence) {
                out[path] = .some(try before.document?.decoded())
            } else if oldest == 1 || first.document.map({ $0.createTime == first.commitTime }) == true {
                // Never logged before: the first change created it (the log is whole, or it says so).
                out[path] = .some(nil)
            } else {
                return nil
            }
        }
        return out
    }
}
