/// What one commit may make: the documents its writes leave, each write counting the whole document, total
/// at most `Limits.maxCommitWrittenBytes`, so that many writes to one large document cannot hold the writer.
public final class CommitBudget {
    private var spent = 0

    /// Makes a fresh budget.
    public init() {}

    /// Charges a document of `size` bytes left by a write; throws once the commit is over its budget.
    public func spend(_ size: Int, on path: DocumentPath) throws(HearthError) {
        spent += size
        if spent > Limits.maxCommitWrittenBytes {
            throw .invalidArgument(
                "the commit's writes leave more than \(Limits.maxCommitWrittenBytes) bytes of documents (each write counts "
                    + "the whole document it leaves; the last was \(path), \(size) bytes): split it, or write that document fewer times")
        }
    }
}
