import Foundation
import HearthCore
import NIOHTTP1

/// An optimistic transaction (docs/api.md, Transactions): its reads record the versions they saw, its writes
/// are buffered and committed together only if none of those documents changed meanwhile.
public final class Transaction: Sendable {
    let hearth: Hearth
    /// The server's id of the transaction.
    public let id: String
    private let buffer = WriteBuffer()

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

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, merge: Bool = false) -> Transaction {
        buffer.set(data, document, merge: merge)
        return self
    }

    @discardableResult
    public func setData<T: Encodable>(from value: T, forDocument document: DocumentReference, merge: Bool = false) -> Transaction {
        buffer.set(from: value, document, merge: merge)
        return self
    }

    @discardableResult
    public func updateData(_ fields: [String: Any], forDocument document: DocumentReference) -> Transaction {
        buffer.update(fields, document)
        return self
    }

    @discardableResult
    public func deleteDocument(_ document: DocumentReference) -> Transaction {
        buffer.delete(document)
        return self
    }

    func commit() async throws(HearthClientError) {
        try await hearth.commit(try buffer.collected(), transaction: id)
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
