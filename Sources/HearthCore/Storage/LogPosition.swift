/// A position in the change log: the last change a reader has seen, and the time of its commit.
public struct LogPosition: Sendable, Hashable, Comparable {
    /// The change log's sequence number of the last change included (0 before any change).
    public var sequence: Int64
    /// The commit time of that change: the state at this position is the database's state at this time.
    public var commitTime: Timestamp

    /// Makes a position.
    public init(sequence: Int64, commitTime: Timestamp) {
        self.sequence = sequence
        self.commitTime = commitTime
    }

    public static func < (a: LogPosition, b: LogPosition) -> Bool { a.sequence < b.sequence }
}
