import HearthCore
import HearthSQLite

/// Stored objects' metadata, in the `files` table (the bytes are the engine's, under the data folder).
extension ReadContext {
    static let fileColumns = """
        path, generation, metageneration, size, content_type, sha256, md5, create_time, update_time, metadata, token_hash
        """

    /// The object named `path`, or nil.
    public func file(at path: FilePath) throws -> StoredFile? {
        let s = try connection.prepare("SELECT \(Self.fileColumns) FROM files WHERE path = ?")
        defer { s.reset() }
        s.bind(1, Array(path.name.utf8))
        guard try s.step() else { return nil }
        return try Self.file(s)
    }

    /// Up to `limit` objects whose names start with `prefix`, in name (byte) order, from `start` on: names
    /// greater than `start`, or at least `start` when `inclusive`.
    public func files(prefix: String, from start: [UInt8]?, inclusive: Bool, limit: Int) throws -> [StoredFile] {
        let low = Array(prefix.utf8)
        var conditions = ["path >= ?1"]
        if FilePath.successor(of: low) != nil { conditions.append("path < ?2") }
        if start != nil { conditions.append(inclusive ? "path >= ?3" : "path > ?3") }
        let s = try connection.prepare(
            "SELECT \(Self.fileColumns) FROM files WHERE \(conditions.joined(separator: " AND ")) ORDER BY path LIMIT ?4")
        defer { s.reset() }
        s.bind(1, low)
        if let upper = FilePath.successor(of: low) { s.bind(2, upper) } else { s.bindNull(2) }
        if let start { s.bind(3, start) } else { s.bindNull(3) }
        s.bind(4, Int64(max(0, limit)))
        var out: [StoredFile] = []
        while try s.step() { out.append(try Self.file(s)) }
        return out
    }

    /// Whether any object names the blob with this SHA-256.
    public func fileBlobNamed(_ sha256: [UInt8]) throws -> Bool {
        let s = try connection.prepare("SELECT 1 FROM files WHERE sha256 = ? LIMIT 1")
        defer { s.reset() }
        s.bind(1, sha256)
        return try s.step()
    }


    static func file(_ s: Statement) throws -> StoredFile {
        let name = String(decoding: s.blob(0), as: UTF8.self)
        var metadata: [String: String] = [:]
        if case .object(let pairs) = try JSON.parse(s.blob(9)) {
            for (key, value) in pairs { metadata[key] = value.stringValue ?? "" }
        }
        return StoredFile(path: try FilePath(name), generation: s.int(1), metageneration: s.int(2), size: s.int(3),
                          contentType: s.text(4), sha256: s.blob(5), md5: s.blob(6),
                          createTime: Timestamp(microseconds: s.int(7)), updateTime: Timestamp(microseconds: s.int(8)),
                          metadata: metadata, tokenHash: s.blob(10))
    }
}

extension WriteContext {
    /// Stores an object's metadata, replacing any under its name.
    public func putFile(_ file: StoredFile) throws {
        let s = try connection.prepare("INSERT OR REPLACE INTO files(\(ReadContext.fileColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        defer { s.reset() }
        s.bind(1, Array(file.path.name.utf8))
        s.bind(2, file.generation)
        s.bind(3, file.metageneration)
        s.bind(4, file.size)
        s.bind(5, file.contentType)
        s.bind(6, file.sha256)
        s.bind(7, file.md5)
        s.bind(8, file.createTime.microseconds)
        s.bind(9, file.updateTime.microseconds)
        let metadata = JSON.object(file.metadata.keys.sorted().map { ($0, JSON.string(file.metadata[$0]!)) })
        s.bind(10, metadata.serialized())
        s.bind(11, file.tokenHash)
        try s.run()
    }

    /// Deletes an object's metadata; returns whether it existed.
    @discardableResult
    public func deleteFile(_ path: FilePath) throws -> Bool {
        let s = try connection.prepare("DELETE FROM files WHERE path = ?")
        defer { s.reset() }
        s.bind(1, Array(path.name.utf8))
        try s.run()
        return connection.changes > 0
    }
}
