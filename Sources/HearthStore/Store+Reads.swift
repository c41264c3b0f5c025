import CSQLite
import HearthCore
import HearthSQLite

/// The three ways to read: on a reader thread, and on the calling thread either by key or within a bound.
extension Store {
    /// Runs a read on a reader thread. Reads see the last committed state, field index included: a write's
    /// index rows are committed with it.
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReadContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            read(body) { continuation.resume(with: $0) }
        }
    }

    /// `read(_:)` for callers that are not tasks: `completion` runs once, on the reader thread, with the result.
    /// It must not block.
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReadContext) throws -> T,
                                  completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        // The job holds the parts of the store it uses.
        let accepted = readers.submit { [statistics, composites] connection in
            completion(Result { try body(ReadContext(connection: connection, statistics: statistics, composites: composites)) })
        }
        if !accepted { completion(.failure(HearthError.unavailable("the server is shutting down"))) }
    }

    /// The decoded document at `path` (nil when missing) for a security rule's `get()` or `exists()` outside
    /// a transaction, on the calling thread: from a cache that this process's commits keep exact (see
    /// `DecodedDocumentCache`), else a point read.
    public func ruleLookup(_ path: DocumentPath) throws -> Document? {
        try documentCache.document(at: path) { try pointRead { try $0.document(at: path) } }
    }

    /// Runs a short, bounded read (a lookup by key) on the calling thread, with a pooled connection.
    ///
    /// A point read takes microseconds, less than the two thread switches of a hop to a reader thread; reads
    /// that scan (listings, queries) use `read` instead.
    public func pointRead<T>(_ body: (ReadContext) throws -> T) throws -> T {
        try pointReaders.with { connection in try body(ReadContext(connection: connection, statistics: statistics, composites: composites)) }
    }

    /// Runs a read on the calling thread like `pointRead`, for reads that are usually short but could be long
    /// (a query): once SQLite has run about `instructions` virtual-machine instructions for it, the read stops
    /// and throws `ReadBudgetExceeded`, and the caller can run it again with `read`. A read that reaches the
    /// bound never returns a value, even one its body made from interrupted statements.
    public func boundedRead<T>(instructions: Int, _ body: (ReadContext) throws -> T) throws -> T {
        try pointReaders.with { connection in
            let (result, exceeded) = connection.withInstructionLimit(instructions) {
                try body(ReadContext(connection: connection, statistics: statistics, composites: composites))
            }
            // An interrupted statement may have ended a transaction the body meant to close itself.
            if sqlite3_get_autocommit(connection.handle) == 0 { try? connection.execute("ROLLBACK") }
            if exceeded { throw ReadBudgetExceeded() }
            return try result.get()
        }
    }
}
