import Foundation
import GRPCCore
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import SwiftProtobuf

/// The bidirectional `Listen` stream over the change feed, as the WebSocket endpoint is: one feed connection per
/// stream, a target per `add_target`. A target's snapshot goes out as Firestore's watch protocol has it: its
/// documents as `document_change` or `document_remove`, `CURRENT` after the first, then a global `NO_CHANGE`
/// with the read time and resume token, the consistent point at which a client shows its view. A resumed target's
/// first snapshot carries, before `CURRENT`, an existence filter with the count of its documents.
extension FirestoreService {
    func listen(request: StreamingServerRequest<Google_Firestore_V1_ListenRequest>,
                context: ServerContext) async throws -> StreamingServerResponse<Google_Firestore_V1_ListenResponse> {
        let caller: FirestoreCaller
        do { caller = try self.caller(request.metadata) } catch { throw FirestoreStatus.rpcError(error, logger: logger) }
        return StreamingServerResponse { [self] writer in
            let connection = feed.connect(identity: caller.identity, session: caller.session, expires: caller.expires)
            let (ready, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            connection.onEventsReady { signal.yield() }
            let stream = ListenStream(connection: connection)
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await stream.receive(request.messages, service: self, writer: writer)
                    }
                    group.addTask {
                        for await _ in ready {
                            while true {
                                let (events, finished) = connection.takeReady()
                                for event in events { try await stream.send(event, to: writer) }
                                if finished { return }
                                if events.isEmpty { break }
                            }
                        }
                    }
                    if let expires = caller.expires {
                        // A user's access token ends the stream when it expires (the client reopens it with a
                        // fresh token and resumes), as it ends a WebSocket listener.
                        group.addTask {
                            try await Task.sleep(until: expires, clock: .continuous)
                            connection.terminate(.unauthenticated("the access token expired; reopen the stream with a fresh one and resume"),
                                                 closeCode: 1008)
                            try await Task.sleep(for: .seconds(3600))
                        }
                    }
                    // Either side ending ends the stream: the client half-closed, or the feed ended the connection.
                    try await group.next()
                    group.cancelAll()
                }
            } catch {
                connection.close()
                signal.finish()
                throw FirestoreStatus.rpcError(error, logger: logger)
            }
            connection.close()
            signal.finish()
            return [:]
        }
    }
}

/// One Listen stream's state: its database (from the first request) and the mapping of its targets.
final class ListenStream: @unchecked Sendable {
    let connection: ListenConnection
    private let lock = NSLock()
    private var databaseValue: FirestoreDatabase?

    init(connection: ListenConnection) { self.connection = connection }

    var database: FirestoreDatabase? { lock.withLock { databaseValue } }

    /// Reads the client's requests until it half-closes.
    func receive(_ messages: RPCAsyncSequence<Google_Firestore_V1_ListenRequest, any Error>, service: FirestoreService,
                 writer: RPCWriter<Google_Firestore_V1_ListenResponse>) async throws {
        for try await message in messages {
            let db = try FirestoreDatabase(name: message.database)
            let first = lock.withLock { () -> FirestoreDatabase in
                if databaseValue == nil { databaseValue = db }
                return databaseValue!
            }
            if first != db {
                throw HearthError.invalidArgument("a Listen stream serves one database; it began with \(first.name)")
            }
            switch message.targetChange {
            case nil:
                throw HearthError.invalidArgument("a ListenRequest needs add_target or remove_target")
            case .addTarget(let target)?:
                let id = target.targetID
                // `ADD` goes out with the target's first snapshot (`send`), so that nothing of the target can
                // overtake it.
                do throws(HearthError) {
                    let (asked, resume) = try listenTarget(target, db)
                    try connection.listen(id: String(id), target: asked, resumeToken: resume)
                } catch {
                    try await writer.write(Self.removal(id, error))
                }
            case .removeTarget(let id)?:
                do {
                    try connection.unlisten(id: String(id))
                    var change = Google_Firestore_V1_TargetChange()
                    change.targetChangeType = .remove
                    change.targetIds = [id]
                    try await writer.write(.with { $0.targetChange = change })
                } catch let error as HearthError {
                    try await writer.write(Self.removal(id, error))
                }
            }
        }
    }

    func listenTarget(_ target: Google_Firestore_V1_Target, _ db: FirestoreDatabase) throws(HearthError) -> (ListenTarget, String?) {
        guard target.targetID > 0 else {
            throw .invalidArgument("target_id must be a positive number chosen by the client")
        }
        var resume: String?
        switch target.resumeType {
        case nil: break
        case .resumeToken(let bytes)?:
            guard let token = String(bytes: bytes, encoding: .utf8) else {
                throw .invalidArgument("the resume token was not issued by this server")
            }
            resume = token
        case .readTime?:
            throw .invalidArgument("resuming at a read_time is not served by Hearth; resume with a resume_token")
        }
        switch target.targetType {
        case nil:
            throw .invalidArgument("a target needs a query or documents")
        case .documents(let documents)?:
            guard documents.documents.count == 1 else {
                throw .invalidArgument("a documents target names exactly one document in Hearth, got \(documents.documents.count)")
            }
            return (.document(try db.documentPath(documents.documents[0])), resume)
        case .query(let query)?:
            guard case .structuredQuery(let structured)? = query.queryType else {
                throw .invalidArgument("a query target needs a structured_query")
            }
            if structured.hasFindNearest { throw .invalidArgument("vector search (find_nearest) cannot be listened to") }
            return (.query(try db.query(structured, parent: query.parent)), resume)
        }
    }

    static func removal(_ id: Int32, _ error: HearthError) -> Google_Firestore_V1_ListenResponse {
        var change = Google_Firestore_V1_TargetChange()
        change.targetChangeType = .remove
        change.targetIds = [id]
        change.cause = .with {
            $0.code = Int32(FirestoreStatus.code(error.code).rawValue)
            $0.message = error.message
        }
        return .with { $0.targetChange = change }
    }

    /// Writes one event of the feed as Firestore's responses.
    func send(_ event: ListenEvent, to writer: RPCWriter<Google_Firestore_V1_ListenResponse>) async throws {
        switch event {
        case .pong:
            return
        case .closed(let error, _):
            throw error
        case .requestError(let id, let error):
            guard let id, let number = Int32(id) else { throw error }
            try await writer.write(Self.removal(number, error))
        case .targetError(let id, let error):
            try await writer.write(Self.removal(Int32(id) ?? 0, error))
        case .snapshot(let snapshot):
            guard let db = database, let id = Int32(snapshot.targetID) else { return }
            let readTime = FirestoreDatabase.proto(snapshot.readTime)
            let token = Data(snapshot.resumeToken.utf8)
            var responses: [Google_Firestore_V1_ListenResponse] = []
            if snapshot.initial {
                responses.append(.with { $0.targetChange = .with { $0.targetChangeType = .add; $0.targetIds = [id] } })
            }
            if snapshot.reset {
                responses.append(.with { $0.targetChange = .with { $0.targetChangeType = .reset; $0.targetIds = [id] } })
            }
            for change in snapshot.changes {
                switch change.kind {
                case .added, .modified:
                    responses.append(.with {
                        $0.documentChange = .with {
                            $0.document = db.proto(change.document)
                            $0.targetIds = [id]
                        }
                    })
                case .removed:
                    responses.append(.with {
                        $0.documentRemove = .with {
                            $0.document = db.name(of: change.document.path)
                            $0.removedTargetIds = [id]
                            $0.readTime = readTime
                        }
                    })
                }
            }
            if let count = snapshot.resumedCount {
                // After a resume, the count of the target's documents, as Firestore sends it: a client whose view
                // holds another number drops it and listens afresh.
                responses.append(.with { $0.filter = .with { $0.targetID = id; $0.count = Int32(clamping: count) } })
            }
            if snapshot.initial || snapshot.reset {
                responses.append(.with {
                    $0.targetChange = .with {
                        $0.targetChangeType = .current
                        $0.targetIds = [id]
                        $0.resumeToken = token
                        $0.readTime = readTime
                    }
                })
            }
            responses.append(.with {
                $0.targetChange = .with {
                    $0.targetChangeType = .noChange
                    $0.resumeToken = token
                    $0.readTime = readTime
                }
            })
            try await writer.write(contentsOf: responses)
        }
    }
}
