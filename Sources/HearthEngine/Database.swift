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
    /// The functions file in force, whose document triggers each commit matches; swapped atomically on reload.
    public let functions: FunctionsInForce
    let logger: Logger

    /// Opens the engine over a storage; `functions` is the holder the accounts' storage queues events from too
    /// (`StorageBackend.open`).
    public init(storage: any DocumentStorage, configuration: Configuration = .init(), transactions: TransactionRegistry? = nil,
                functions: FunctionsInForce = FunctionsInForce(), logger: Logger = Logger(label: "hearth.engine")) {
        self.storage = storage
        self.functions = functions
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
            return try Self.apply(writes, commitTime: commitTime, in: context, stored: stored, triggers: self.functions.file)
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
            return try Self.apply(writes, commitTime: commitTime, in: context, triggers: self.functions.file)
        }
    }

    /// Applies writes inside the writer's transaction; several writes to one document collapse into one
    /// stored change.
    /// `stored` holds documents already read in this transaction (nil when missing), which need no new read;
    /// with `noneStored`, the caller found that no document the writes touch is stored, and none is read.
    /// `prepared[k]`, when there, holds the stored forms of `writes[k].fields` (`DocumentStorage.prepare`).
    /// The events of `triggers` that the changes cause are queued in the same transaction.
    static func apply(_ writes: [Write], prepared: [PreparedFields?] = [], commitTime: Timestamp, in context: any DocumentWriter,
                      stored: [DocumentPath: Document?] = [:], noneStored: Bool = false,
                      triggers: FunctionsFile? = nil) throws -> CommitResult {
        // One slot per document the writes touch, found with one hash lookup per write: a commit of thousands of
        // writes (an import's batch) otherwise spends much of its time hashing and comparing paths.
        var slotOf: [DocumentPath: Int] = [:]
        slotOf.reserveCapacity(writes.count)
        var slots: [DocumentSlot] = []
        slots.reserveCapacity(writes.count)
        // Slots in the order their documents first changed: the order of their stored changes.
        var order: [Int] = []
        var results: [WriteResult] = []
        results.reserveCapacity(writes.count)
        let budget = CommitBudget()
        for (k, write) in writes.enumerated() {
            let next = slots.count
            let i = Self.slot(of: write.path, in: &slotOf, next: next)
            if i == next {
                let known: Document?? = noneStored ? .some(nil) : stored.isEmpty ? nil : stored[write.path]
                let read = try known ?? context.reader.document(at: write.path)?.decoded()
                slots.append(DocumentSlot(path: write.path, read: read))
            }
            let (outcome, transformResults): (WriteOutcome, [Value])
            do {
                (outcome, transformResults) = try write.apply(to: slots[i].current, commitTime: commitTime, budget: budget)
            } catch {
                // In a commit of several writes, the error says which one failed, as its validation errors do.
                throw writes.count > 1 ? HearthError(error.code, "writes[\(k)]: \(error.message)") : error
            }
            switch outcome {
            case .unchanged(let doc):
                results.append(WriteResult(updateTime: doc?.updateTime, transformResults: transformResults,
                                           document: doc.map(StoredDocument.init)))
            case .put(let doc):
                if slots[i].change == nil { order.append(i) }
                let forms = k < prepared.count && write.leavesItsFields ? prepared[k] : nil
                assert(forms == nil || doc.fields == write.fields)
                let stored = forms.map { StoredDocument(path: doc.path, data: $0.encoded, createTime: doc.createTime,
                                                        updateTime: doc.updateTime) } ?? StoredDocument(doc)
                slots[i].change = .put(doc, stored, forms)
                results.append(WriteResult(updateTime: commitTime, transformResults: transformResults, document: stored))
            case .deleted:
                if slots[i].change == nil { order.append(i) }
                slots[i].change = .deleted
                results.append(WriteResult(updateTime: nil, transformResults: [], document: nil))
            }
        }
        for i in order {
            switch slots[i].change {
            case .put(let doc, let stored, let forms)?:
                try context.put(stored, fields: doc.fields, prepared: forms, previous: slots[i].read?.fields, commitTime: commitTime)
            case .deleted?, nil:
                try context.delete(slots[i].path, previous: slots[i].read?.fields, commitTime: commitTime)
            }
        }
        if let triggers, triggers.watchesDocuments {
            var events: [FunctionEventRecord] = []
            for i in order {
                events += triggers.documentEvents(path: slots[i].path, before: slots[i].read, after: slots[i].current,
                                                  commitTime: commitTime, makeID: FunctionsFile.makeEventID)
            }
            if !events.isEmpty { try context.addFunctionEvents(events) }
        }
        if let triggers, !triggers.timers.isEmpty {
            for i in order { try triggers.armTimers(path: slots[i].path, before: slots[i].read, after: slots[i].current, in: context) }
        }
        return CommitResult(writeResults: results, commitTime: commitTime)
    }

    /// The slot of `path`: its index in `slots`, or `next` after recording it as that (one hash lookup either way).
    private static func slot(of path: DocumentPath, in slots: inout [DocumentPath: Int], next: Int) -> Int {
        func take(_ slot: inout Int) -> Int { slot }
        return take(&slots[path, default: next])
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

/// A document a commit's writes touch: as stored before the commit, and as the writes so far leave it.
struct DocumentSlot {
    enum Change { case put(Document, StoredDocument, PreparedFields?), deleted }

    let path: DocumentPath
    /// The document stored before the commit (nil: missing); its fields let index maintenance touch only what changed.
    let read: Document?
    /// What the writes so far did to it (nil: nothing).
    var change: Change?

    /// The document as the writes so far leave it.
    var current: Document? {
        switch change {
        case nil: return read
        case .put(let doc, _, _)?: return doc
        case .deleted?: return nil
        }
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
