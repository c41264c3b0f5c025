/// One committed change to one document, as the change log holds it.
public struct ChangeRecord: Sendable {
    /// The change log's sequence number; strictly increasing in commit order.
    public var sequence: Int64
    /// The commit's time.
    public var commitTime: Timestamp
    /// The document changed.
    public var path: DocumentPath
    /// The document after the change, or nil when it was deleted.
    public var document: StoredDocument?

    /// Makes a change record.
    public init(sequence: Int64, commitTime: Timestamp, path: DocumentPath, document: StoredDocument?) {
        self.sequence = sequence
        self.commitTime = commitTime
        self.path = path
        self.document = document
    }
}
