import HearthCore

extension Database {
    /// Every stored document in path order, one per line in its shape on the wire (`{"path", "id", "data",
    /// "createTime", "updateTime"}`): the NDJSON `hearth export` writes and `hearth import` reads. `write` is
    /// given the lines of `pageSize` documents at a time, so memory stays bounded whatever the database's size.
    /// Pages are read one transaction each: beside a server that writes meanwhile, the file is not one snapshot.
    /// Answers the number of documents.
    @discardableResult
    public func exportNDJSON(pageSize: Int = 1_000, _ write: ([UInt8]) throws -> Void) async throws -> Int {
        var after: String?
        var count = 0
        while true {
            let cursor = after
            let page = try await storage.read { try $0.allDocuments(after: cursor, limit: pageSize) }
            var w = JSONWriter()
            for document in page {
                document.write(to: &w)
                w.bytes.append(0x0A)
            }
            if !page.isEmpty { try write(w.bytes) }
            count += page.count
            guard page.count == pageSize, let last = page.last else { return count }
            after = last.path.description
        }
    }
}
