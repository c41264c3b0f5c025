/// A stored document: its path, fields and versions.
public struct Document: Sendable, Equatable {
    /// Where the document lives.
    public var path: DocumentPath
    /// The document's fields.
    public var fields: [String: Value]
    /// When the document was created.
    public var createTime: Timestamp
    /// When the document last changed; strictly increasing per database, it serves as the version.
    public var updateTime: Timestamp

    /// Makes a document.
    public init(path: DocumentPath, fields: [String: Value], createTime: Timestamp, updateTime: Timestamp) {
        self.path = path
        self.fields = fields
        self.createTime = createTime
        self.updateTime = updateTime
    }

    /// Writes the document's wire form: `{"path", "id", "data", "createTime", "updateTime"}`.
    public func write(to w: inout JSONWriter) {
        Document.writeWire(path: path, dataJSON: nil, fields: fields, createTime: createTime, updateTime: updateTime, to: &w)
    }

    /// Writes the wire form from already-encoded data JSON (the stored form), avoiding a decode.
    public static func writeWire(path: DocumentPath, dataJSON: [UInt8]?, fields: [String: Value]? = nil,
                                 createTime: Timestamp, updateTime: Timestamp, to w: inout JSONWriter) {
        w.raw("{\"path\":\"")
        // The path's segments written in place: no joined string for each document answered.
        for (k, segment) in path.segments.enumerated() {
            if k > 0 { w.bytes.append(UInt8(ascii: "/")) }
            w.escaped(segment)
        }
        w.raw("\",\"id\":")
        w.string(path.id)
        w.raw(",\"data\":")
        if let dataJSON { w.raw(dataJSON) } else { Value.writeFields(fields ?? [:], to: &w) }
        w.raw(",\"createTime\":\"")
        w.rfc3339(createTime)
        w.raw("\",\"updateTime\":\"")
        w.rfc3339(updateTime)
        w.raw("\"}")
    }

    /// The document's wire JSON bytes.
    public var wireBytes: [UInt8] {
        var w = JSONWriter()
        write(to: &w)
        return w.bytes
    }

    /// Firestore's storage size of a document: its name, its fields and 32 bytes of overhead.
    public static func storageSize(path: DocumentPath, fields: [String: Value]) -> Int {
        nameSize(path) + fieldsSize(fields) + 32
    }

    /// Firestore's size of a document name: each segment plus one, plus 16.
    public static func nameSize(_ path: DocumentPath) -> Int {
        path.segments.reduce(16) { $0 + $1.utf8.count + 1 }
    }

    static func fieldsSize(_ fields: [String: Value]) -> Int {
        fields.reduce(0) { $0 + $1.key.utf8.count + 1 + valueSize($1.value) }
    }

    /// Firestore's storage size of one value.
    public static func valueSize(_ value: Value) -> Int {
        switch value {
        case .null, .bool: return 1
        case .int, .double, .timestamp: return 8
        case .string(let s): return s.utf8.count + 1
        case .bytes(let b): return b.count
        case .reference(let p): return nameSize(p)
        case .geoPoint: return 16
        case .array(let items): return items.reduce(0) { $0 + valueSize($1) }
        case .map(let m): return fieldsSize(m)
        }
    }

    /// Throws 413 when the fields are over Firestore's 1 MiB document limit; returns their size.
    @discardableResult
    public static func checkSize(path: DocumentPath, fields: [String: Value]) throws(HearthError) -> Int {
        let size = storageSize(path: path, fields: fields)
        if size > Limits.maxDocumentSize {
            throw .payloadTooLarge(
                "document \(path) would be \(size) bytes; the limit is \(Limits.maxDocumentSize) bytes (1 MiB)")
        }
        return size
    }
}
