import HearthCore

/// What a listener watches: one document, or the result of a query.
public enum ListenTarget: Sendable, Equatable {
    /// One document (present or missing).
    case document(DocumentPath)
    /// A query's result, limits and cursors included.
    indirect case query(Query)  // boxed: subscribers are copied per delivery, and a query has many parts

    /// True when a change to a document at this path may concern the target.
    func concerns(_ path: DocumentPath) -> Bool {
        switch self {
        case .document(let p): return p == path
        case .query(let q): return q.contains(path: path)
        }
    }

    /// A key that identical targets share, so that listeners of the same query share one view.
    var sharingKey: String {
        switch self {
        case .document(let p): return "d:" + p.description
        case .query(let q): return "q:" + q.jsonText
        }
    }
}
