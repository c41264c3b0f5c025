import HearthCore

/// The one implementation of every operation. Where it runs is the caller's choice (`Placement`): a network
/// thread may ask for reads to run where it is, within a budget, and be answered in place (a read that needs
/// more fails, for the caller to send elsewhere); writes always go to the writer thread. The meaning is the
/// same either way.
extension Database {
    /// Performs an operation for an identity and hands its outcome to `completion`, once: on the calling
    /// thread when the operation finished there, else on a reader or writer thread. `completion` must not block.
    public func perform(_ operation: DatabaseOperation, as identity: Identity, placement: Placement = .readers,
                        completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) {
        do {
            switch operation {
            case .get(let path, let transaction):
                completion(.success(.document(try get(path, as: identity, transaction: transaction))))
            case .list(let collection, let pageSize, let pageToken, let transaction):
                if let transaction { try transactions.touch(transaction, identity: identity) }
                try authorizeList(collection, pageSize: pageSize, identity: identity)
                let after = try pageToken.map(ListPage.decodeToken)
                read(placement, { try $0.documents(in: collection, after: after, limit: pageSize + 1) }) { [self] read in
                    completion(Result {
                        let docs = try read.get()
                        let page = Array(docs.prefix(pageSize))
                        try recordReads(page, transaction, identity)
                        let next = docs.count > pageSize ? page.last.map { ListPage.encodeToken($0.path.id) } : nil
                        return .page(ListPage(documents: page, nextPageToken: next))
                    })
                }
            case .query(let asked, let transaction):
                if let transaction { try transactions.touch(transaction, identity: identity) }
                let query = try admit(asked, as: identity)
                let readTime = Timestamp.now()
                read(placement, { try $0.runQuery(query) }) { [self] read in
                    completion(Result {
                        let documents = try read.get()
                        try recordReads(documents, transaction, identity)
                        return .queried(QueryResult(documents: documents, readTime: readTime))
                    })
                }
            case .aggregate(let asked, let transaction):
                if let transaction { try transactions.touch(transaction, identity: identity) }
                var admitted = asked
                admitted.query = try admit(asked.query, as: identity)
                let (aggregate, recording, readTime) = (admitted, transaction != nil, Timestamp.now())
                read(placement, { try $0.runAggregate(aggregate, returningDocuments: recording) }) { [self] read in
                    completion(Result {
                        let (values, documents) = try read.get()
                        try recordReads(documents, transaction, identity)
                        return .aggregated(AggregateResult(values: values, order: aggregate.aggregations.map(\.alias),
                                                           readTime: readTime))
                    })
                }
            case .commit(let request):
                let writes = request.writes
                let job = try commitJob(transaction: request.transaction, as: identity) { _ in writes }
                storage.write(job) { completion($0.map(Outcome.committed)) }
            case .deleteRecursive(let path):
                storage.write(try deleteRecursiveJob(path, as: identity)) { completion($0.map(Outcome.committed)) }
            case .beginTransaction(let address):
                _ = try enforcedProgram(for: identity)
                completion(.success(.transaction(try transactions.begin(.init(identity, address: address)))))
            case .rollback(let id):
                try transactions.rollback(id, identity: identity)
                completion(.success(.done))
            case .collectionIDs(let parent):
                guard identity.isAdmin else {
                    throw rules.dev ? HearthError.permissionDenied("Missing or insufficient permissions: listing collection ids takes the admin key.")
                        : HearthError.permissionDenied()
                }
                read(placement, { try $0.collectionIDs(under: parent) }) { completion($0.map(Outcome.collectionIDs)) }
            case .file(let fileOperation):
                performFile(fileOperation, as: identity, placement: placement, completion: completion)
            case .functions(let functionsOperation):
                try performFunctions(functionsOperation, as: identity, placement: placement, completion: completion)
            case .documentsBelow(let prefix, let after, let limit):
                guard identity.isAdmin else {
                    throw rules.dev ? HearthError.permissionDenied("Missing or insufficient permissions: reading every document below a path takes the admin key.")
                        : HearthError.permissionDenied()
                }
                let readTime = Timestamp.now()
                read(placement, { try Self.documents(below: prefix, after: after, limit: limit, in: $0) }) { read in
                    completion(read.map { .queried(QueryResult(documents: $0, readTime: readTime)) })
                }
            }
        } catch {
            completion(.failure(error))
        }
    }

    /// `perform` for callers that are tasks: reads run on reader threads. A file put and the calls of a
    /// resumable upload run here, in the caller's task, as their bytes arrive, and so does a thumbnail,
    /// awaiting the thumbnailer.
    public func perform(_ operation: DatabaseOperation, as identity: Identity) async throws -> Outcome {
        if case .file(let file) = operation, let outcome = try await performFileInTask(file, as: identity) {
            return .file(outcome)
        }
        return try await withCheckedThrowingContinuation { continuation in
            perform(operation, as: identity) { continuation.resume(with: $0) }
        }
    }

    /// Reads a document, deciding the `get` rule with it as stored. A point read takes microseconds, less
    /// than a hop to a reader thread, so it runs where it is called, whatever the placement.
    func get(_ path: DocumentPath, as identity: Identity, transaction: String?) throws -> StoredDocument? {
        if let transaction { try transactions.touch(transaction, identity: identity) }
        let doc = try storage.pointRead { try $0.document(at: path) }
        try authorizeRead(path: path, document: doc, identity: identity)
        if let transaction {
            try transactions.recordRead(transaction, identity: identity, path: path, version: doc?.updateTime)
        }
        return doc
    }

    /// Runs a read where the placement says: on a reader thread, or here within its budget (failing with
    /// `ReadBudgetExceeded` past it).
    func read<T: Sendable>(_ placement: Placement, _ body: @escaping @Sendable (any DocumentReader) throws -> T,
                           completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        switch placement {
        case .readers: storage.read(body, completion: completion)
        case .here(let instructions): completion(Result { try storage.boundedRead(instructions: instructions, body) })
        }
    }

    /// Pages through the documents in path order from the prefix on, until a path leaves it. Paths are stored
    /// as text, so every path below a prefix sorts right after `prefix/` and before any other.
    static func documents(below prefix: [String], after: DocumentPath?, limit: Int,
                          in reader: any DocumentReader) throws -> [StoredDocument] {
        let start = prefix.isEmpty ? "" : prefix.joined(separator: "/") + "/"
        var cursor = start
        if let after, compareUTF8(after.description, start) > 0 { cursor = after.description }
        var out: [StoredDocument] = []
        while out.count < limit {
            let page = try reader.allDocuments(after: cursor, limit: min(limit - out.count, Limits.maxPageSize))
            for doc in page {
                guard doc.path.description.hasPrefix(start) else { return out }
                out.append(doc)
            }
            guard let last = page.last else { break }
            cursor = last.path.description
        }
        return out
    }

    /// Under a transaction, records every document read at its version, so the commit aborts if one changes.
    func recordReads(_ documents: [StoredDocument], _ transaction: String?, _ identity: Identity) throws {
        guard let transaction else { return }
        for doc in documents {
            try transactions.recordRead(transaction, identity: identity, path: doc.path, version: doc.updateTime)
        }
    }
}
