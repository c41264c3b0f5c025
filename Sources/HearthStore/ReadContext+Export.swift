import HearthCore
import HearthSQLite

extension ReadContext {
    /// Up to `limit` documents of the whole database with paths after `afterPath`, in stored path order
    /// (for exports, which must reach documents whose parent document does not exist).
    public func allDocuments(after afterPath: String?, limit: Int) throws -> [StoredDocument] {
        let s = try connection.prepare(
            "SELECT path, data, create_time, update_time FROM documents WHERE path > ? ORDER BY path LIMIT ?")
        defer { s.reset() }
        s.bind(1, afterPath ?? "")
        s.bind(2, Int64(limit))
        var out: [StoredDocument] = []
        while try s.step() {
            let segments = s.text(0).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            out.append(StoredDocument(path: DocumentPath(uncheckedSegments: segments), data: s.blob(1),
                                      createTime: Timestamp(microseconds: s.int(2)),
                                      updateTime: Timestamp(microseconds: s.int(3))))
        }
        return out
    }
}
