import HearthCore
import Logging

/// The database as users see it: reads, listings, commits and transactions, each on behalf of an identity.
/// Knows no HTTP.
public final class Database: Sendable {
    /// Engine settings.
    public struct Configuration: Sendable {
        /// Transaction lifetimes and bounds.
        public var transactions = TransactionRegistry.Configuration()
        /// Makes the default configuration.
        public init() {}
    }

    /// The storage underneath.
    package let storage: any DocumentStorage
    /// Open transactions.
    public let transactions: TransactionRegistry
    /// The security rules in force; swapped atomically on reload.
    public let rules = RulesInForce()
    let logger: Logger

    /// Opens the engine over a storage.
    public init(storage: any DocumentStorage, configuration: Configuration = .init(), transactions: TransactionRegistry? = nil,
                logger: Logger = Logger(label: "hearth.engine")) {
        self.storage = storage
        self.transactions = transactions ?? TransactionRegistry(configuration: configuration.transactions)
        self.logger = logger
    }

    // MARK: Writes

    /// Applies writes atomically, in order; ends the transaction when one is named (`perform(.commit)`).
    public func commit(_ request: CommitRequest, as identity: Identity) async throws -> CommitResult {
        guard case .committed(let result) = try await perform(.commit(request), as: identity) else {
            preconditionFailure("a commit comes to its results")
        }
        return result
    }

    /// Commits the writes `build` makes for the commit time (fixed inside the writer's transaction), with the
    /// rules decided there, where the stored state is known.
    func commit(transaction: String?, as identity: Identity,
                writes build: @escaping @Sendable (Timestamp) throws -> [Write]) async throws -> CommitResult {
        try await storage.write(commitJob(transaction: transaction, as: identity, writes: build))
    }

    /// The writer's job for a commit: the rules and a transaction's reads are decided inside it.
    func commitJob(transaction: String?, as identity: Identity,
                           writes build: @escaping @Sendable (Timestamp) throws -> [Write]) throws
        -> @Sendable (any DocumentWriter) throws -> CommitResult {
        let program = try enforcedProgram(for: identity)
        let reads = try transaction.map { id throws(HearthError) in try transactions.finish(id, identity: identity) }
        return { context in
            let commitTime = context.nextCommitTime()
            let writes = try build(commitTime)
            var stored: [DocumentPath: Document?] = [:]
            if let program {
                stored = try self.authorizeWrites(writes, commitTime: commitTime, identity: identity, program: program,
                                                  context: context)
            }
            if let reads {
                for (path, version) in reads {
                    let current = try context.reader.document(at: path)?.updateTime
                    if current != version {
                        throw HearthError.aborted(
                            "transaction aborted: document \(path) changed after it was read; retry the transaction")
                    }
                }
            }
            return try Self.apply(writes, commitTime: commitTime, in: context, stored: stored)
        }
    }

    /// The writer's job for a recursive delete: the document and every document below it, each decided by
    /// the rules, in one commit.
    func deleteRecursiveJob(_ path: DocumentPath, as identity: Identity) throws -> @Sendable (any DocumentWriter) throws -> CommitResult {
        let program = try enforcedProgram(for: identity)
        return { context in
            let commitTime = context.nextCommitTime()
            var writes = [Write(kind: .delete, path: path)]
            for descendant in try context.reader.descendantPaths(of: path) {
                writes.append(Write(kind: .delete, path: descendant))
            }
            if let program {
                try self.authorizeRecursiveDelete(writes.map(\.path), commitTime: commitTime, identity: identity,
                                                  program: program, context: context)
            }
            return try Self.apply(writes, commitTime: commitTime, in: context)
        }
    }

    /// Applies writes inside the writer's transaction; several writes to one document collapse into one
    /// stored change.
    /// `stored` holds documents already read in this transaction (nil when missing), which need no new read.
    static func apply(_ writes: [Write], commitTime: Timestamp, in context: any DocumentWriter,
                      stored: [DocumentPath: Document?] = [:]) throws -> CommitResult {
        var state: [DocumentPath: (Document, StoredDocument)?] = [:]
        var order: [DocumentPath] = []
        // The fields stored before this commit (nil: missing), so index maintenance touches only what changed.
        var original: [DocumentPath: [String: Value]?] = [:]
        var results: [WriteResult] = []
        results.reserveCapacity(writes.count)
        let budget = CommitBudget()
        for (k, write) in writes.enumerated() {
            let existing: Document?
            if let cached = state[write.path] {
                existing = cached?.0
            } else {
                if let known = stored[write.path] { existing = known } else {
                    existing = try context.reader.document(at: write.path)?.decoded()
                }
                if original[write.path] == nil { original[write.path] = .some(existing?.fields) }
            }
            let (outcome, transformResults): (WriteOutcome, [Value])
            do {
                (outcome, transformResults) = try write.apply(to: existing, commitTime: commitTime, budget: budget)
            } catch {
                // In a commit of several writes, the error says which one failed, as its validation errors do.
                throw writes.count > 1 ? HearthError(error.code, "writes[\(k)]: \(error.message)") : error
            }
            switch outcome {
            case .unchanged(let doc):
                results.append(WriteResult(updateTime: doc?.updateTime, transformResults: transformResults,
                                           document: doc.map(StoredDocument.init)))
            case .put(let doc):
                if state[write.path] == nil { order.append(write.path) }
                let stored = StoredDocument(doc)
                state[write.path] = .some((doc, stored))
                results.append(WriteResult(updateTime: commitTime, transformResults: transformResults, document: stored))
            case .deleted:
                if state[write.path] == nil { order.append(write.path) }
                state[write.path] = .some(nil)
                results.append(WriteResult(updateTime: nil, transformResults: [], document: nil))
            }
        }
        for path in order {
            if case .some(.some(let (doc, stored))) = state[path] {
                try context.put(stored, fields: doc.fields, previous: original[path] ?? nil, commitTime: commitTime)
            } else {
                try context.delete(path, previous: original[path] ?? nil, commitTime: commitTime)
            }
        }
        return CommitResult(writeResults: results, commitTime: commitTime)
    }

    /// Authorizes a query or aggregate: a `list` allowed only if the rules hold for every document the query
    /// could return (rules are not filters; see `Database+Rules.swift`).
    func authorizeQuery(_ query: Query, _ identity: Identity) throws {
        guard let program = try enforcedProgram(for: identity) else { return }
        let described: String
        switch query.source {
        case .collection(let collection): described = collection.description
        case .collectionGroup(let id, _): described = "collection group \(id)"
        }
        try authorizeList(Self.listConstraints(for: query), program: program, identity: identity, described: described)
    }
}

/// A page of a collection listing.
public struct ListPage: Sendable {
    /// The documents, in id order.
    public var documents: [StoredDocument]
    /// The token for the next page, when there is one.
    public var nextPageToken: String?

    static func encodeToken(_ id: String) -> String { Base64.encode(Array(id.utf8)) }

    static func decodeToken(_ token: String) throws(HearthError) -> String {
        guard let bytes = Base64.decode(token), let id = String(validating: bytes, as: UTF8.self) else {
            throw .invalidArgument("pageToken '\(token.prefix(64))' is not a token this server issued")
        }
        return id
    }
}

/// The outcome of one write.
public struct WriteResult: Sendable {
    /// The document's update time after the write (the previous one when nothing changed; nil after a delete).
    public var updateTime: Timestamp?
    /// The value each transform produced, in order.
    public var transformResults: [Value]
    /// The document after the write, or nil when it is deleted or missing.
    public var document: StoredDocument?
}

/// The outcome of a commit.
public struct CommitResult: Sendable {
    /// One result per write, in order.
    public var writeResults: [WriteResult]
    /// The commit's time.
    public var commitTime: Timestamp
}
