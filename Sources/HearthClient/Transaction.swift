import Foundation
import HearthCore
import NIOHTTP1

/// An optimistic transaction (docs/api.md, Transactions): its reads record the versions they saw, its writes
/// are buffered and committed together only if none of those documents changed meanwhile.
public final class Transaction: @unchecked Sendable {
    let hearth: Hearth
    /// The server's id of the transaction.
    public let id: String
    private var writes: [JSON] = []
    private var problem: HearthClientError?
    private let lock = NSLock()

    init(hearth: Hearth, id: String) {
        self.hearth = hearth
        self.id = id
    }

    /// Reads a document within the transaction.
    public func getDocument(_ document: DocumentReference) async throws(HearthClientError) -> DocumentSnapshot {
        try await document.getDocument(transaction: id)
    }

    /// Runs a query within the transaction (every document returned counts as read).
    public func getDocuments(_ query: some QueryBuilding) async throws(HearthClientError) -> QuerySnapshot {
        try await query.query.getDocuments(transaction: id)
    }

    private func add(_ make: () throws(HearthClientError) -> JSON) -> Transaction {
        lock.withLock {
            do throws(HearthClientError) { writes.append(try make()) } catch { problem = problem ?? error }
        }
        return self
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, merge: Bool = false) -> Transaction {
        add { () throws(HearthClientError) in WriteBuilder.set(document.path, fields: try Wire.pairs(data, at: nil), merge: merge ? .all : .none) }
    }

    @discardableResult
    public func setData<T: Encodable>(from value: T, forDocument document: DocumentReference, merge: Bool = false) -> Transaction {
        add { () throws(HearthClientError) in
            WriteBuilder.set(document.path, fields: try HearthEncoder().encodeDocument(value), merge: merge ? .all : .none)
        }
    }

    @discardableResult
    public func updateData(_ fields: [String: Any], forDocument document: DocumentReference) -> Transaction {
        add { () throws(HearthClientError) in try WriteBuilder.update(document.path, fields: fields) }
    }

    @discardableResult
    public func deleteDocument(_ document: DocumentReference) -> Transaction {
        add { () throws(HearthClientError) in WriteBuilder.delete(document.path) }
    }

    func commit() async throws(HearthClientError) {
        let (writes, problem) = lock.withLock { (self.writes, self.problem) }
        if let problem { throw problem }
        try await hearth.commit(writes, transaction: id)
    }

    func rollback() async {
        _ = try? await hearth.call(.POST, Transport.encodedPath("/v1/transactions/", id) + "/rollback")
    }
}

extension Hearth {
    /// Runs `body` in a transaction and commits its writes; when the commit is `aborted` (a document it read
    /// changed), runs it again from the start, up to `maxAttempts` times, as Firestore's clients do. An error
    /// thrown by `body` rolls the transaction back and is rethrown; `body` may run more than once, so it
    /// should change nothing outside the transaction.
    public func runTransaction<T: Sendable>(maxAttempts: Int = 5,
                                            _ body: (Transaction) async throws -> T) async throws -> T {
        precondition(maxAttempts >= 1, "maxAttempts must be at least 1")
        var attempt = 0
        while true {
            attempt += 1
            let begun = try await call(.POST, "/v1/transactions")
            guard let id = begun.body?["transaction"]?.stringValue else { throw HearthClientError.decoding("the transaction's answer lacks its id") }
            let transaction = Transaction(hearth: self, id: id)
            let result: T
            do {
                result = try await body(transaction)
            } catch {
                await transaction.rollback()
                throw error
            }
            do throws(HearthClientError) {
                try await transaction.commit()
                return result
            } catch {
                guard error.code == .aborted, attempt < maxAttempts else { throw error }
                // Back off a little, growing, with jitter, so that contending clients drift apart.
                let base = 0.02 * Double(1 << min(attempt, 6))
                try await Task.sleep(for: .seconds(base * Double.random(in: 0.5...1.5)))
            }
        }
    }
}
