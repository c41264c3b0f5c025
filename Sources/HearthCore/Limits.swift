/// Hearth's limits (Firestore's, where Firestore has one), in one place.
public enum Limits {
    /// Largest document, in Firestore's storage-size accounting (bytes).
    public static let maxDocumentSize = 1_048_576
    /// Deepest level a field may sit at: a top-level field is level 1, each map or array adds one.
    public static let maxDepth = 20
    /// Longest field path, in UTF-8 bytes.
    public static let maxFieldPathBytes = 1_500
    /// Longest document or collection id, in UTF-8 bytes.
    public static let maxIDBytes = 1_500
    /// Largest request body, in bytes.
    public static let maxRequestBody = 10 * 1_048_576
    /// Largest request head: the request line and the header fields together, in bytes (`431` past it).
    public static let maxRequestHeadBytes = 64 * 1024
    /// Most header fields in one request (`431` past it).
    public static let maxRequestHeaderFields = 100
    /// Most writes in one commit.
    public static let maxWritesPerCommit = 500
    /// Most bytes of documents (storage-size accounting) the writes of one commit may leave, each write
    /// counting the whole document it leaves: it bounds the work of many writes to one large document.
    public static let maxCommitWrittenBytes = 20 * 1_048_576
    /// Deepest JSON nesting the parser accepts before refusing (guards the stack against hostile input).
    public static let maxJSONDepth = 64
    /// Largest page a collection listing returns.
    public static let maxPageSize = 1_000
    /// Page size when a listing names none.
    public static let defaultPageSize = 100
}
