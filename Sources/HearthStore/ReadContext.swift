import HearthCore
import HearthSQLite

/// Reads on one connection; handed to `Store.read` and (as part of `WriteContext`) to writers.
public struct ReadContext {
    let connection: SQLiteConnection
    /// Where scans add the documents they fetch (nil on the writer's connection).
    let statistics: StoreStatistics?
    /// The composite indexes the planner may use.
    let composites: CompositeIndexes

    init(connection: SQLiteConnection, statistics: StoreStatistics? = nil, composites: CompositeIndexes) {
        self.connection = connection
        self.statistics = statistics
        self.composites = composites
    }

    /// The document at a path, or nil.
    public func document(at path: DocumentPath) throws -> StoredDocument? {
        let s = try connection.prepare(Self.documentSQL)
        defer { s.reset() }
        s.bind(1, path.description)
        guard try s.step() else { return nil }
        return StoredDocument(path: path, data: s.blob(0), createTime: Timestamp(microseconds: s.int(1)),
                              updateTime: Timestamp(microseconds: s.int(2)))
    }

    static let documentSQL = CachedSQL("SELECT data, create_time, update_time FROM documents WHERE path = ?")

    /// Whether a document is stored whose path (as text) lies between `lower` and `upper`, both included, in
    /// UTF-8 byte order: one step through the path index rather than a read per path.
    public func anyDocument(from lower: String, through upper: String) throws -> Bool {
        let s = try connection.prepare("SELECT 1 FROM documents WHERE path >= ? AND path <= ? LIMIT 1")
        defer { s.reset() }
        s.bind(1, lower)
        s.bind(2, upper)
        return try s.step()
    }

    /// Up to `limit` documents of a collection with ids after `afterID`, in id order: the collection's query
    /// in its default (`__name__`) order, served from the field index's name entries.
    public func documents(in collection: CollectionPath, after afterID: String?, limit: Int) throws -> [StoredDocument] {
        var query = Query(source: .collection(collection), limit: limit)
        if let afterID {
            // A position, not a document: the page's last document may have been deleted since.
            let after = DocumentPath(uncheckedSegments: collection.segments + [afterID])
            query.start = Query.Cursor(.values([.reference(after)]), inclusive: false)
        }
        return try runQuery(query)
    }

    /// The paths of every document strictly below a document (in its subcollections, at any depth).
    public func descendantPaths(of path: DocumentPath) throws -> [DocumentPath] {
        let prefix = path.description + "/"
        let s = try connection.prepare("SELECT path FROM documents WHERE path >= ? AND path < ? ORDER BY path")
        defer { s.reset() }
        s.bind(1, prefix)
        s.bind(2, path.description + "0")  // '0' is the byte after '/'
        var out: [DocumentPath] = []
        while try s.step() {
            out.append(DocumentPath(uncheckedSegments: s.text(0).split(separator: "/", omittingEmptySubsequences: false).map(String.init)))
        }
        return out
    }

    /// The ids of the collections directly under a document (or at the root when nil) that hold at least one
    /// document at some depth, in id order. Skips from one collection to the next instead of scanning.
    public func collectionIDs(under parent: DocumentPath?) throws -> [String] {
        let prefix = parent.map { $0.description + "/" } ?? ""
        let upper = parent.map { $0.description + "0" }
        let s = try connection.prepare(
            upper == nil ? "SELECT path FROM documents WHERE path >= ? ORDER BY path LIMIT 1"
                         : "SELECT path FROM documents WHERE path >= ? AND path < ? ORDER BY path LIMIT 1")
        var ids: [String] = []
        var lower = prefix
        while true {
            s.reset()
            s.bind(1, lower)
            if let upper { s.bind(2, upper) }
            guard try s.step() else { break }
            let path = s.text(0)
            let rest = path.utf8.dropFirst(prefix.utf8.count)
            guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { break }
            let id = String(Substring(rest[rest.startIndex..<slash]))
            ids.append(id)
            lower = prefix + id + "0"
        }
        s.reset()
        return ids.sorted(by: utf8Less)
    }
}
