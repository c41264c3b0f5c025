import Foundation
import GRPCCore
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import NIOCore
import SwiftProtobuf

/// The bidirectional `Listen` stream over the change feed, as the WebSocket endpoint is: one feed connection per
/// stream, a target per `add_target`. A target's snapshot goes out as Firestore's watch protocol has it: its
/// documents as `document_change` or `document_remove`, `CURRENT` after the first, then a global `NO_CHANGE`
/// with the read time and resume token, the consistent point at which a client shows its view. A resumed target's
/// first snapshot carries, before `CURRENT`, an existence filter with the count of its documents.
///
/// The connection handler (`FirestoreWireHandler`) serves the stream on its event loop: it hands each request
/// message to `receive` and writes what `encoded(_:)` makes of the feed's events, so no task runs per stream.
extension FirestoreService {
    func listen(request: StreamingServerRequest<Google_Firestore_V1_ListenRequest>,
                context: ServerContext) async throws -> StreamingServerResponse<Google_Firestore_V1_ListenResponse> {
        // Unreachable over Hearth's transport, whose connection handler serves Listen itself.
        throw RPCError(code: .unimplemented, message: "Listen is served by the connection handler")
    }
}

/// One Listen stream's meaning: its database (from the first request) and its targets. Used only on the stream's
/// event loop.
final class ListenStream {
    let connection: ListenConnection
    private(set) var database: FirestoreDatabase?
    /// The database's name, made once: part of the key its snapshots' shared encodings are kept under.
    private var databaseName = ""

    init(connection: ListenConnection) { self.connection = connection }

    /// A client's request: the responses to write at once (a target refused or removed). Throws what ends the
    /// stream (a request of another database, or with no target change).
    func receive(_ message: Google_Firestore_V1_ListenRequest) throws -> [Google_Firestore_V1_ListenResponse] {
        let db = try FirestoreDatabase(name: message.database)
        if database == nil { (database, databaseName) = (db, db.name) }
        if let first = database, first != db {
            throw HearthError.invalidArgument("a Listen stream serves one database; it began with \(first.name)")
        }
        switch message.targetChange {
        case nil:
            throw HearthError.invalidArgument("a ListenRequest needs add_target or remove_target")
        case .addTarget(let target)?:
            let id = target.targetID
            // `ADD` goes out with the target's first snapshot (`responses(for:)`), so that nothing of the target
            // can overtake it.
            do throws(HearthError) {
                let (asked, resume) = try listenTarget(target, db)
                try connection.listen(id: String(id), target: asked, resumeToken: resume)
                return []
            } catch {
                return [Self.removal(id, error)]
            }
        case .removeTarget(let id)?:
            do throws(HearthError) {
                try connection.unlisten(id: String(id))
                var change = Google_Firestore_V1_TargetChange()
                change.targetChangeType = .remove
                change.targetIds = [id]
                return [.with { $0.targetChange = change }]
            } catch {
                return [Self.removal(id, error)]
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

    /// One event of the feed as Firestore's responses, serialized with their gRPC prefixes. A snapshot of a view's
    /// listeners is encoded once for every stream of the view in the same database that names the target alike,
    /// as the WebSocket listeners share a frame. Throws what ends the stream.
    func encoded(_ event: ListenEvent) throws -> SharedEncodings.Encoded {
        guard case .snapshot(let snapshot) = event, let encodings = snapshot.encodings, database != nil else {
            return try Self.encoded(responses(for: event))
        }
        let key = SharedEncodings.Key(database: databaseName, target: snapshot.targetID)
        return try encodings.encoded(key) { try Self.encoded(responses(for: event)) }
    }

    /// Responses as gRPC messages: each a 5-byte prefix (uncompressed, its length) and its bytes.
    static func encoded(_ responses: [Google_Firestore_V1_ListenResponse]) throws -> SharedEncodings.Encoded {
        var bytes = ByteBuffer()
        for response in responses {
            let message: [UInt8] = try response.serializedBytes()
            bytes.writeInteger(UInt8(0))
            bytes.writeInteger(UInt32(message.count))
            bytes.writeBytes(message)
        }
        return .init(messages: responses.count, bytes: bytes)
    }

    /// One event of the feed as Firestore's responses. Throws what ends the stream (the feed ended the
    /// connection: revoked, expired, or too slow a reader).
    func responses(for event: ListenEvent) throws -> [Google_Firestore_V1_ListenResponse] {
        switch event {
        case .pong:
            return []
        case .closed(let error, _):
            throw error
        case .requestError(let id, let error):
            guard let id, let number = Int32(id) else { throw error }
            return [Self.removal(number, error)]
        case .targetError(let id, let error):
            return [Self.removal(Int32(id) ?? 0, error)]
        case .snapshot(let snapshot):
            guard let db = database, let id = Int32(snapshot.targetID) else { return [] }
            let readTime = FirestoreDatabase.proto(snapshot.readTime)
            let token = Data(snapshot.resumeToken.utf8)
            var responses: [Google_Firestore_V1_ListenResponse] = []
            responses.reserveCapacity(snapshot.changes.count + 3)
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
            return responses
        }
    }
}
