import Foundation
import HearthCore
import HearthEngine
import HearthFirestoreProtos

/// The RPCs answered from completions rather than tasks: each is the one implementation of its RPC, which the
/// connection handler (`FirestoreWireHandler`) calls on the event loop and the task-based service awaits.
/// `completion` runs once, on whatever thread the engine finishes on.
extension FirestoreService {
    func commit(_ message: Google_Firestore_V1_CommitRequest, _ caller: FirestoreCaller,
                completion: @escaping @Sendable (Result<Google_Firestore_V1_CommitResponse, any Error>) -> Void) {
        let db: FirestoreDatabase, writes: [Write], transaction: String?
        do {
            db = try FirestoreDatabase(name: message.database)
            try Self.checkWriteCount(message.writes.count)
            writes = try message.writes.enumerated().map { k, w in try db.write(w, at: "writes[\(k)]") }
            transaction = message.transaction.isEmpty ? nil : try Self.transactionID(message.transaction)
        } catch {
            return completion(.failure(error))
        }
        database.perform(.commit(CommitRequest(writes: writes, transaction: transaction)), as: caller.identity) { outcome in
            completion(Result {
                guard case .committed(let result) = try outcome.get() else {
                    preconditionFailure("a commit comes to its results")
                }
                var response = Google_Firestore_V1_CommitResponse()
                (response.writeResults, response.commitTime) = db.proto(result)
                return response
            })
        }
    }

    /// BatchGetDocuments: `send` takes each response in order (a point read runs where it is asked, so on the
    /// event loop these all come at once), then `completion` ends the call.
    func batchGet(_ message: Google_Firestore_V1_BatchGetDocumentsRequest, _ caller: FirestoreCaller, peer: String,
                  send: @escaping @Sendable (Google_Firestore_V1_BatchGetDocumentsResponse) -> Void,
                  completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let db: FirestoreDatabase, paths: [DocumentPath], mask: [FieldPath]?
        do {
            db = try FirestoreDatabase(name: message.database)
            paths = try message.documents.map(db.documentPath)
            mask = try message.hasMask ? FirestoreDatabase.mask(message.mask) : nil
        } catch {
            return completion(.failure(error))
        }
        readTransaction(ReadConsistency(message.consistencySelector), caller, peer: peer) { [self] begun in
            let transaction: String?, isNew: Bool
            switch begun {
            case .success(let value): (transaction, isNew) = value
            case .failure(let error): return completion(.failure(error))
            }
            // Reads one document after another; each completion starts the next read.
            @Sendable func read(_ k: Int) {
                guard k < paths.count else {
                    if paths.isEmpty, isNew, let transaction {
                        var response = Google_Firestore_V1_BatchGetDocumentsResponse()
                        response.transaction = Self.transactionBytes(transaction)
                        response.readTime = FirestoreDatabase.proto(Timestamp.now())
                        send(response)
                    }
                    return completion(.success(()))
                }
                database.perform(.get(paths[k], transaction: transaction), as: caller.identity) { outcome in
                    do {
                        guard case .document(let stored) = try outcome.get() else {
                            preconditionFailure("a get comes to a document")
                        }
                        var response = Google_Firestore_V1_BatchGetDocumentsResponse()
                        response.readTime = FirestoreDatabase.proto(Timestamp.now())
                        if let stored {
                            response.found = try db.proto(stored, mask: mask)
                        } else {
                            response.missing = message.documents[k]
                        }
                        if k == 0, isNew, let transaction { response.transaction = Self.transactionBytes(transaction) }
                        send(response)
                    } catch {
                        return completion(.failure(error))
                    }
                    read(k + 1)
                }
            }
            read(0)
        }
    }

    /// The transaction a read runs in: the one named, one begun for it (`new_transaction`), or none.
    func readTransaction(_ consistency: ReadConsistency, _ caller: FirestoreCaller, peer: String,
                         completion: @escaping @Sendable (Result<(id: String?, begun: Bool), any Error>) -> Void) {
        switch consistency {
        case .current: completion(.success((nil, false)))
        case .readTime: completion(.failure(Self.refuseReadTime()))
        case .transaction(let bytes): completion(Result { (try Self.transactionID(bytes), false) })
        case .newTransaction:
            database.perform(.beginTransaction(address: peer), as: caller.identity) { outcome in
                completion(Result {
                    guard case .transaction(let id) = try outcome.get() else {
                        preconditionFailure("beginning a transaction comes to its id")
                    }
                    return (id, true)
                })
            }
        }
    }
}
