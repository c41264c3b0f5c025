import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import HearthFirestoreProtos
import SwiftProtobuf

/// A client of Firestore's gRPC service for tests: the generated stubs over a real HTTP/2 connection on loopback,
/// with an `authorization` header of the test's choosing.
package final class FirestoreTestClient: Sendable {
    package let grpc: GRPCClient<HTTP2ClientTransport.Posix>
    package let stub: Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>
    let connections: Task<Void, any Error>
    /// `projects/test/databases/(default)`, or the named database asked for.
    package let database: String
    /// The metadata every call sends (`authorization: Bearer <token>` when a token was given).
    package let metadata: Metadata

    /// Connects to `127.0.0.1:port`, acting with `token` (nil: no credentials).
    package init(port: Int, token: String?, database: String = "(default)") throws {
        grpc = GRPCClient(transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port),
                                                       transportSecurity: .plaintext))
        stub = Google_Firestore_V1_Firestore.Client(wrapping: grpc)
        connections = Task { [grpc] in try await grpc.runConnections() }
        self.database = "projects/test/databases/\(database)"
        var metadata: Metadata = [:]
        if let token { metadata.addString("Bearer \(token)", forKey: "authorization") }
        self.metadata = metadata
    }

    /// Closes the connection.
    package func close() async {
        grpc.beginGracefulShutdown()
        _ = try? await connections.value
    }

    /// The full name of a document (`users/alice`), or of the documents root for "".
    package func name(_ path: String) -> String {
        path.isEmpty ? "\(database)/documents" : "\(database)/documents/\(path)"
    }

    /// Runs `body` with a client of the server's gRPC service, then closes it.
    package static func with<T: Sendable>(port: Int, token: String?, database: String = "(default)",
                                          _ body: (FirestoreTestClient) async throws -> T) async throws -> T {
        let client = try FirestoreTestClient(port: port, token: token, database: database)
        return try await withCleanup({ try await body(client) }, cleanup: { await client.close() })
    }

    // MARK: Calls the tests make often

    /// Commits writes and answers the response.
    package func commit(_ writes: [Google_Firestore_V1_Write], transaction: Data = Data()) async throws -> Google_Firestore_V1_CommitResponse {
        try await stub.commit(.with {
            $0.database = database
            $0.writes = writes
            $0.transaction = transaction
        }, metadata: metadata)
    }

    /// Reads a document (NOT_FOUND when missing).
    package func get(_ path: String) async throws -> Google_Firestore_V1_Document {
        try await stub.getDocument(.with { $0.name = name(path) }, metadata: metadata)
    }

    /// Runs a query under the documents root and answers its documents.
    package func query(_ query: Google_Firestore_V1_StructuredQuery, parent: String = "") async throws -> [Google_Firestore_V1_Document] {
        try await stub.runQuery(.with {
            $0.parent = name(parent)
            $0.structuredQuery = query
        }, metadata: metadata) { response in
            var out: [Google_Firestore_V1_Document] = []
            for try await message in response.messages where message.hasDocument { out.append(message.document) }
            return out
        }
    }

    /// A write that sets a document to these fields.
    package func set(_ path: String, _ fields: [String: Google_Firestore_V1_Value]) -> Google_Firestore_V1_Write {
        .with { $0.update = .with { $0.name = name(path); $0.fields = fields } }
    }

    /// Opens a Listen stream.
    package func listen() -> FirestoreTestListener { FirestoreTestListener(client: self) }
}

/// One Listen stream: requests sent as the test asks, responses kept in order for the test to take.
package final class FirestoreTestListener: Sendable {
    let requests: AsyncStream<Google_Firestore_V1_ListenRequest>.Continuation
    let inbox = ResponseInbox()
    let call: Task<Void, Never>

    init(client: FirestoreTestClient) {
        let (stream, requests) = AsyncStream.makeStream(of: Google_Firestore_V1_ListenRequest.self)
        self.requests = requests
        let inbox = inbox
        call = Task {
            do {
                try await client.stub.listen(metadata: client.metadata, requestProducer: { writer in
                    for await request in stream { try await writer.write(request) }
                }, onResponse: { response in
                    for try await message in response.messages { inbox.append(message) }
                })
                inbox.finish(nil)
            } catch {
                inbox.finish(error)
            }
        }
    }

    /// Sends a request.
    package func send(_ request: Google_Firestore_V1_ListenRequest) { requests.yield(request) }

    /// Half-closes the stream and waits for the call to end.
    package func close() async {
        requests.finish()
        call.cancel()
        await call.value
    }

    /// The next response; throws the stream's error when it ended with one, or when nothing comes in `timeout`.
    package func next(timeout: Duration = .seconds(60)) async throws -> Google_Firestore_V1_ListenResponse {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let taken = try inbox.take() { return taken }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw ListenWaitExpired()
    }

    /// Responses up to and including the next global consistent point (a `NO_CHANGE` naming no target).
    package func nextSnapshot(timeout: Duration = .seconds(60)) async throws -> [Google_Firestore_V1_ListenResponse] {
        var out: [Google_Firestore_V1_ListenResponse] = []
        while true {
            let response = try await next(timeout: timeout)
            out.append(response)
            if case .targetChange(let change)? = response.responseType, change.targetChangeType == .noChange,
               change.targetIds.isEmpty {
                return out
            }
        }
    }

    package struct ListenWaitExpired: Error {}
}

/// Responses as they arrive, and how the stream ended.
final class ResponseInbox: @unchecked Sendable {
    private let lock = NSLock()
    private var queued: [Google_Firestore_V1_ListenResponse] = []
    private var ended = false
    private var failure: (any Error)?

    func append(_ response: Google_Firestore_V1_ListenResponse) { lock.withLock { queued.append(response) } }

    func finish(_ error: (any Error)?) {
        lock.withLock {
            ended = true
            failure = error
        }
    }

    /// The oldest response not taken; nil while none waits; the stream's end once every response was taken.
    func take() throws -> Google_Firestore_V1_ListenResponse? {
        try lock.withLock {
            if !queued.isEmpty { return queued.removeFirst() }
            if ended { throw failure ?? RPCError(code: .cancelled, message: "the Listen stream ended") }
            return nil
        }
    }
}
