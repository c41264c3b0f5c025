/// A document as stored: its fields still as canonical wire JSON, so reads can answer without decoding.
public struct StoredDocument: Sendable {
    /// Where the document lives.
    public var path: DocumentPath
    /// The fields as canonical wire JSON (an object).
    public var data: [UInt8]
    /// When the document was created.
    public var createTime: Timestamp
    /// When the document last changed.
    public var updateTime: Timestamp

    /// Makes a stored document.
    public init(path: DocumentPath, data: [UInt8], createTime: Timestamp, updateTime: Timestamp) {
        self.path = path
        self.data = data
        self.createTime = createTime
        self.updateTime = updateTime
    }

    /// Makes the stored form of a document.
    public init(_ document: Document) {
        self.init(path: document.path, data: Value.encodeFields(document.fields),
                  createTime: document.createTime, updateTime: document.updateTime)
    }

    /// Decodes the fields.
    public func decoded() throws(HearthError) -> Document {
        Document(path: path, fields: try Value.decodeFields(JSON.parse(data)), createTime: createTime, updateTime: updateTime)
    }

    /// Writes the wire form without decoding the fields.
    public func write(to w: inout JSONWriter) {
        Document.writeWire(path: path, dataJSON: data, createTime: createTime, updateTime: updateTime, to: &w)
    }
}
