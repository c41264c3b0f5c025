import HearthCore

/// What a caller asks of the database, whichever way the request came in (the HTTP routes, the event-loop
/// fast path, and any later way in): every way in parses its requests into one of these and hands it to
/// `Database.perform`, so each rule of behaviour is written once.
public enum DatabaseOperation: Sendable {
    /// Read one document; nil in the outcome when missing. Under a transaction, the version read is recorded.
    case get(DocumentPath, transaction: String?)
    /// One page of a collection's documents in id order.
    case list(CollectionPath, pageSize: Int, pageToken: String?, transaction: String?)
    /// Run a query.
    case query(Query, transaction: String?)
    /// Run an aggregation.
    case aggregate(AggregateQuery, transaction: String?)
    /// Apply writes atomically, in order; ends the transaction the request names.
    case commit(CommitRequest)
    /// Delete a document and every document below it, in one commit.
    case deleteRecursive(DocumentPath)
    /// Open an optimistic transaction; `address` is where the request came from (shares are bounded per address).
    case beginTransaction(address: String?)
    /// End a transaction without writing.
    case rollback(String)
    /// The ids of the subcollections under a document, or of the root collections.
    case collectionIDs(under: DocumentPath?)
    /// An operation on stored objects (`/v1/files`).
    case file(FileOperation)
    /// One page of every document whose path starts with `prefix` (a collection's or a document's segments;
    /// empty for the whole database), at any depth, in path order, after `after`: what Firestore's kindless
    /// queries read (a recursive delete's). No rule decides such a read, so it takes the admin key.
    case documentsBelow(prefix: [String], after: DocumentPath?, limit: Int)
    /// An operation on the queue of function events (admin only).
    case functions(FunctionsOperation)

    /// Whether it writes (runs on the writer thread whatever the placement).
    public var writes: Bool {
        switch self {
        case .commit, .deleteRecursive: return true
        case .file(let operation): return operation.writes
        case .functions(let operation): return operation.writes
        default: return false
        }
    }
}

/// What an operation came to.
public enum Outcome: Sendable {
    /// A document read (nil: missing).
    case document(StoredDocument?)
    /// A page of a listing.
    case page(ListPage)
    /// A query's documents.
    case queried(QueryResult)
    /// An aggregation's values.
    case aggregated(AggregateResult)
    /// A commit's results.
    case committed(CommitResult)
    /// A transaction begun.
    case transaction(String)
    /// Subcollection ids.
    case collectionIDs([String])
    /// Done, with nothing to say (a rollback).
    case done
    /// What a file operation came to.
    case file(FileOutcome)
    /// Function events read.
    case functionEvents([FunctionEventRecord])
    /// What became of acknowledgements (`FunctionsOperation.delivered`), in their order.
    case acknowledged([AcknowledgementOutcome])
    /// What a run of timers or schedules did.
    case functionClock(FunctionClockOutcome)
}

/// Where an operation's reads may run.
public enum Placement: Sendable {
    /// On a reader thread.
    case readers
    /// On the calling thread (a network thread), as long as SQLite needs at most about this many
    /// virtual-machine instructions for it; a read that needs more fails with `ReadBudgetExceeded` (as does
    /// one that would wait for the writer), and the caller performs it again on the readers.
    case here(instructions: Int)
}
