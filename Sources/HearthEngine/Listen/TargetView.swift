import HearthCore

/// A target's current result and how it moves from one committed state to the next: a plain state machine,
/// without I/O. The feed gives it each commit's changes; it answers with the snapshot's changes, or asks
/// for the query to run again when a limit window lost a document whose successor it cannot know.
public struct TargetView: Sendable {
    /// What `apply` decided.
    public enum Step: Sendable, Equatable {
        /// The changes to deliver (empty when the target is not concerned).
        case changes([ViewChange])
        /// The result cannot be derived from the changes (a limit window lost a member, or an offset moved):
        /// run the query again and `reset` to its result.
        case requery
    }

    /// The target, with document cursors resolved to values.
    public let target: ListenTarget
    /// The query the view evaluates: the target's, without projection (ordering needs every field).
    let query: Query?
    /// The query's normalized order, computed once (every change is checked and sorted with it).
    let order: [Query.Order]
    /// The current result in query order, whole documents.
    public private(set) var documents: [Document] = []

    /// Makes an empty view; `target` must have its cursors resolved (`Query.resolvingCursors`).
    public init(target: ListenTarget) {
        self.target = target
        if case .query(var q) = target {
            q.select = nil
            query = q
            order = q.normalizedOrder
        } else {
            query = nil
            order = []
        }
    }

    /// The target's result over a set of documents (any documents; those outside the target are ignored).
    public func result(over docs: [Document]) -> [Document] {
        switch target {
        case .document(let path):
            return docs.filter { $0.path == path }.prefix(1).map { $0 }
        case .query:
            // Cursors are resolved, so running cannot fail on a missing cursor document.
            return (try? query!.run(over: docs, lookup: { _ in nil })) ?? []
        }
    }

    /// True when the document belongs to the target's unlimited result.
    func admits(_ doc: Document) -> Bool {
        guard let query else { return true }
        return query.matches(doc, order: order) && query.withinCursors(doc, order: order)
    }

    /// Replaces the result, answering the changes that turn the old result into the new one.
    public mutating func reset(to result: [Document]) -> [ViewChange] {
        let changes = diff(from: documents, to: result)
        documents = result
        return changes
    }

    /// Applies one state's changes (each document's state after them; nil when deleted).
    public mutating func apply(_ changes: [DocumentPath: Document?]) -> Step {
        guard let query else {
            guard case .document(let path) = target, let change = changes[path] else { return .changes([]) }
            return .changes(reset(to: change.map { [$0] } ?? []))
        }
        // Skipped documents are not held, so any change in the source may shift an offset window.
        if query.offset > 0 { return changes.keys.contains { query.contains(path: $0) } ? .requery : .changes([]) }
        var members: [DocumentPath: Document] = [:]
        for doc in documents { members[doc.path] = doc }
        var relevant = false
        for (path, doc) in changes where query.contains(path: path) {
            let admitted = doc.flatMap { admits($0) ? $0 : nil }
            if members[path] == nil && admitted == nil { continue }
            relevant = true
            members[path] = admitted
        }
        guard relevant else { return .changes([]) }
        let order = order
        var candidates = members.values.sorted { Query.compare($0, $1, order: order) < 0 }
        if let limit = query.limit ?? query.limitToLast {
            let fromEnd = query.limitToLast != nil
            if documents.count >= limit, let boundary = fromEnd ? documents.first : documents.last {
                // Documents past the old boundary may be preceded by ones the view never held.
                candidates = candidates.filter {
                    let c = Query.compare($0, boundary, order: order)
                    return fromEnd ? c >= 0 : c <= 0
                }
                if candidates.count < limit { return .requery }
            }
            candidates = fromEnd ? Array(candidates.suffix(limit)) : Array(candidates.prefix(limit))
        }
        return .changes(reset(to: candidates))
    }

    /// The changes from one result to another, removals first, then modifications and additions in the new
    /// order, each index taken with the earlier changes applied (Firestore's `docChanges` semantics).
    func diff(from old: [Document], to new: [Document]) -> [ViewChange] {
        if old.isEmpty {
            return new.enumerated().map { ViewChange(kind: .added, document: project($1), oldIndex: -1, newIndex: $0) }
        }
        var rank: [DocumentPath: Int] = [:]
        for (k, doc) in new.enumerated() { rank[doc.path] = k }
        var oldByPath: [DocumentPath: Document] = [:]
        for doc in old { oldByPath[doc.path] = doc }
        var working = old
        var out: [ViewChange] = []
        var k = 0
        while k < working.count {
            if rank[working[k].path] == nil {
                out.append(ViewChange(kind: .removed, document: project(working[k]), oldIndex: k, newIndex: -1))
                working.remove(at: k)
            } else {
                k += 1
            }
        }
        // Settled documents (unchanged ones, and those placed already) are always in new order among
        // themselves; a moved document goes right after the last settled one that precedes it.
        var settled = Set(working.compactMap { doc in oldByPath[doc.path].map { $0.updateTime } == rank[doc.path].map { new[$0].updateTime } ? doc.path : nil })
        for doc in new {
            let kind: ViewChange.Kind
            var oldIndex = -1
            if let previous = oldByPath[doc.path] {
                if previous.updateTime == doc.updateTime { continue }
                kind = .modified
                oldIndex = working.firstIndex { $0.path == doc.path }!
                working.remove(at: oldIndex)
            } else {
                kind = .added
            }
            let position = (working.lastIndex { settled.contains($0.path) && rank[$0.path]! < rank[doc.path]! }).map { $0 + 1 } ?? 0
            working.insert(doc, at: position)
            settled.insert(doc.path)
            out.append(ViewChange(kind: kind, document: project(doc), oldIndex: oldIndex, newIndex: position))
        }
        return out
    }

    /// The document as the target delivers it (only the selected fields).
    func project(_ doc: Document) -> Document {
        if case .query(let q) = target { return q.project(doc) }
        return doc
    }
}
