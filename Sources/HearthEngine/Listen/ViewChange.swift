import HearthCore

/// One change in a snapshot, with Firestore's index semantics: `oldIndex` is the document's position before
/// this change (every earlier change of the snapshot applied), `newIndex` its position after it; -1 where
/// the document is absent.
public struct ViewChange: Sendable, Equatable {
    /// The kind of change.
    public enum Kind: String, Sendable {
        /// The document entered the result.
        case added
        /// The document stayed in the result and changed.
        case modified
        /// The document left the result (the document is its last version in the result).
        case removed
    }

    /// The kind of change.
    public var kind: Kind
    /// The document (projected when the query selects fields).
    public var document: Document
    /// The position before the change, or -1 for `added`.
    public var oldIndex: Int
    /// The position after the change, or -1 for `removed`.
    public var newIndex: Int

    /// Makes a change.
    public init(kind: Kind, document: Document, oldIndex: Int, newIndex: Int) {
        self.kind = kind
        self.document = document
        self.oldIndex = oldIndex
        self.newIndex = newIndex
    }

    /// Writes `{"type", "doc", "oldIndex", "newIndex"}`.
    public func write(to w: inout JSONWriter) {
        w.raw("{\"type\":\"")
        w.raw(kind.rawValue)
        w.raw("\",\"doc\":")
        document.write(to: &w)
        w.raw(",\"oldIndex\":")
        w.raw(String(oldIndex))
        w.raw(",\"newIndex\":")
        w.raw(String(newIndex))
        w.raw("}")
    }

    /// The JSON array of a snapshot's changes; encoded once and shared by every listener of a view.
    public static func encode(_ changes: [ViewChange]) -> [UInt8] {
        var w = JSONWriter(capacity: 64 + changes.count * 256)
        w.raw("[")
        for (k, change) in changes.enumerated() {
            if k > 0 { w.raw(",") }
            change.write(to: &w)
        }
        w.raw("]")
        return w.bytes
    }

    /// Applies changes to a materialized result, checking each index; nil when an index does not fit (a
    /// client's view, and the tests' check that snapshots are exact).
    public static func apply(_ changes: [ViewChange], to view: [Document]) -> [Document]? {
        var out = view
        for change in changes {
            switch change.kind {
            case .added:
                guard change.oldIndex == -1, change.newIndex >= 0, change.newIndex <= out.count,
                      !out.contains(where: { $0.path == change.document.path }) else { return nil }
                out.insert(change.document, at: change.newIndex)
            case .modified:
                guard change.oldIndex >= 0, change.oldIndex < out.count, out[change.oldIndex].path == change.document.path
                else { return nil }
                out.remove(at: change.oldIndex)
                guard change.newIndex >= 0, change.newIndex <= out.count else { return nil }
                out.insert(change.document, at: change.newIndex)
            case .removed:
                guard change.newIndex == -1, change.oldIndex >= 0, change.oldIndex < out.count,
                      out[change.oldIndex].path == change.document.path else { return nil }
                out.remove(at: change.oldIndex)
            }
        }
        return out
    }
}
