import Foundation
import GRPCCore
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// Listen over gRPC shares the change feed with the WebSocket endpoint: a write over either face reaches the
/// listeners of both, and Firestore's watch protocol frames each snapshot.
@Suite struct FirestoreListenTests {
    static func queryTarget(_ firestore: FirestoreTestClient, id: Int32, collection: String) -> Google_Firestore_V1_ListenRequest {
        .with {
            $0.database = firestore.database
            $0.addTarget = .with {
                $0.targetID = id
                $0.query = .with { $0.parent = firestore.name(""); $0.structuredQuery = .from(collection) }
            }
        }
    }

    static func changedIDs(_ responses: [Google_Firestore_V1_ListenResponse]) -> [String] {
        responses.compactMap { r in
            if case .documentChange(let c)? = r.responseType { return String(c.document.name.split(separator: "/").last!) }
            return nil
        }
    }

    @Test func httpWriteReachesAGRPCListener() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                #expect(try await http.put("/v1/docs/rooms/a", #"{"n": 1}"#).status == 200)
                let listener = firestore.listen()
                listener.send(Self.queryTarget(firestore, id: 7, collection: "rooms"))
                let first = try await listener.nextSnapshot()
                let kinds = first.compactMap { r -> Google_Firestore_V1_TargetChange.TargetChangeType? in
                    if case .targetChange(let t)? = r.responseType { return t.targetChangeType }
                    return nil
                }
                #expect(kinds == [.add, .current, .noChange])
                #expect(Self.changedIDs(first) == ["a"])
                #expect(first.last?.targetChange.resumeToken.isEmpty == false)

                #expect(try await http.put("/v1/docs/rooms/b", #"{"n": 2}"#).status == 200)
                #expect(Self.changedIDs(try await listener.nextSnapshot()) == ["b"])
                #expect(try await http.delete("/v1/docs/rooms/a").status == 204)
                let removed = try await listener.nextSnapshot()
                #expect(removed.contains { r in
                    if case .documentRemove(let d)? = r.responseType { return d.document == firestore.name("rooms/a") && d.removedTargetIds == [7] }
                    return false
                })
                await listener.close()
            }
        }
    }

    /// Streams of one connection are written from its event loop together: one write reaches every one of them.
    @Test func aWriteReachesEveryStreamOfOneConnection() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let listeners = (1...20).map { _ in firestore.listen() }
                for (k, listener) in listeners.enumerated() {
                    listener.send(Self.queryTarget(firestore, id: Int32(k + 1), collection: "fans"))
                    _ = try await listener.nextSnapshot()
                }
                #expect(try await http.put("/v1/docs/fans/a", #"{"n": 1}"#).status == 200)
                for listener in listeners {
                    #expect(Self.changedIDs(try await listener.nextSnapshot()) == ["a"])
                    await listener.close()
                }
            }
        }
    }

    /// Streams of one query on connections of their own share the snapshot's encoding when they name the target
    /// alike; each still gets its own target id when it does not.
    @Test func streamsOfOneQuerySharingAnEncodingKeepTheirTargetIDs() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            let clients = try (0..<3).map { _ in try FirestoreTestClient(port: server.grpcPort!, token: server.adminKey) }
            try await withCleanup({
                let ids: [Int32] = [7, 7, 9]
                let listeners = clients.map { $0.listen() }
                for (listener, id) in zip(listeners, ids) {
                    listener.send(Self.queryTarget(clients[0], id: id, collection: "shared"))
                    _ = try await listener.nextSnapshot()
                }
                #expect(try await http.put("/v1/docs/shared/a", #"{"n": 1}"#).status == 200)
                for (listener, id) in zip(listeners, ids) {
                    let snapshot = try await listener.nextSnapshot()
                    let changes = snapshot.compactMap { r -> Google_Firestore_V1_DocumentChange? in
                        if case .documentChange(let c)? = r.responseType { return c }
                        return nil
                    }
                    #expect(changes.map(\.targetIds) == [[id]])
                    #expect(changes.map { $0.document.name } == [clients[0].name("shared/a")])
                    await listener.close()
                }
            }, cleanup: { for client in clients { await client.close() } })
        }
    }

    /// A request a test sends: with no target change, or adding a query target in the client's database or
    /// another one.
    enum Sent: Sendable {
        case noTarget
        case target(database: String?)

        func request(_ firestore: FirestoreTestClient) -> Google_Firestore_V1_ListenRequest {
            switch self {
            case .noTarget: return .with { $0.database = firestore.database }
            case .target(let database):
                var request = FirestoreListenTests.queryTarget(firestore, id: 1, collection: "c")
                if let database { request.database = database }
                return request
            }
        }
    }

    /// Requests that end the stream with INVALID_ARGUMENT, naming what was wrong.
    static let streamEndingRequests: [(String, [Sent], String)] = [
        ("no target change", [.noTarget], "add_target or remove_target"),
        ("a malformed database", [.target(database: "projects/test")], "is not a database name"),
        ("a second database", [.target(database: nil), .target(database: "projects/test/databases/other")],
         "serves one database"),
    ]

    @Test(arguments: streamEndingRequests)
    func aStreamEndingRequest(_ name: String, _ requests: [Sent], _ message: String) async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let listener = firestore.listen()
                for request in requests { listener.send(request.request(firestore)) }
                var ended: RPCError?
                do {
                    while true { _ = try await listener.next() }
                } catch let error as RPCError {
                    ended = error
                }
                #expect(ended?.code == .invalidArgument, "\(name)")
                #expect(ended?.message.contains(message) == true, "\(name): \(ended?.message ?? "")")
                await listener.close()
            }
        }
    }

    /// A request over the size limit ends the stream, whose headers are already sent, with RESOURCE_EXHAUSTED in
    /// its trailers; the connection still serves.
    @Test func aListenRequestOverTenMiBEndsTheStream() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let listener = firestore.listen()
                var big = Self.queryTarget(firestore, id: 1, collection: "c")
                big.labels = ["big": String(repeating: "x", count: 11_000_000)]
                listener.send(big)
                var ended: RPCError?
                do {
                    while true { _ = try await listener.next() }
                } catch let error as RPCError {
                    ended = error
                }
                #expect(ended?.code == .resourceExhausted, "\(String(describing: ended))")
                await listener.close()
                let next = firestore.listen()
                next.send(Self.queryTarget(firestore, id: 1, collection: "c"))
                _ = try await next.nextSnapshot()
                await next.close()
            }
        }
    }

    @Test func grpcWriteReachesAWebSocketListener() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
                try await ws.listen("q", query: #"{"from": "rooms"}"#)
                try await ws.expect("snapshot", id: "q")
                _ = try await firestore.commit([firestore.set("rooms/c", ["n": .int(3)])])
                let snapshot = try await ws.expect("snapshot", id: "q")
                guard case .array(let changes)? = snapshot["changes"] else { throw ExpectationFailure("no changes in \(snapshot)") }
                #expect(changes.first?["type"] == .string("added"))
                #expect(ws.views["q"]?.map(\.path.id) == ["c"])
                await ws.close()
            }
        }
    }

    @Test func resumeTokenReplaysOnlyWhatChanged() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("rooms/a", ["n": .int(1)])])
                let listener = firestore.listen()
                listener.send(Self.queryTarget(firestore, id: 1, collection: "rooms"))
                let token = try await listener.nextSnapshot().last!.targetChange.resumeToken
                await listener.close()

                _ = try await firestore.commit([firestore.set("rooms/b", ["n": .int(2)])])
                let resumed = firestore.listen()
                var request = Self.queryTarget(firestore, id: 1, collection: "rooms")
                request.addTarget.resumeToken = token
                resumed.send(request)
                #expect(Self.changedIDs(try await resumed.nextSnapshot()) == ["b"])
                await resumed.close()
            }
        }
    }

    @Test func aBadTargetIsRemovedWithItsCause() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let listener = firestore.listen()
                var request = Self.queryTarget(firestore, id: 3, collection: "rooms")
                request.addTarget.query.structuredQuery.where = Google_Firestore_V1_StructuredQuery.composite(.and, [
                    Google_Firestore_V1_StructuredQuery.fieldFilter("a", .notEqual, .int(1)),
                    Google_Firestore_V1_StructuredQuery.fieldFilter("b", .notIn, .array([.int(2)])),
                ])
                listener.send(request)
                let response = try await listener.next()
                #expect(response.targetChange.targetChangeType == .remove)
                #expect(response.targetChange.targetIds == [3])
                #expect(response.targetChange.cause.code == Int32(RPCError.Code.invalidArgument.rawValue))
                await listener.close()
            }
        }
    }

    @Test func targetsPastTheLimitAreRemovedAsResourceExhausted() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let limit = ListenConfiguration().maxTargetsPerConnection
                let listener = firestore.listen()
                for id in 1...Int32(limit + 20) {
                    listener.send(.with {
                        $0.database = firestore.database
                        $0.addTarget = .with { $0.targetID = id; $0.documents = .with { $0.documents = [firestore.name("rooms/r\(id)")] } }
                    })
                }
                var removed: Set<Int32> = []
                var current: Set<Int32> = []
                while removed.count < 20 || current.count < limit {
                    let response = try await listener.next()
                    guard case .targetChange(let change)? = response.responseType else { continue }
                    if change.targetChangeType == .remove {
                        #expect(change.cause.code == Int32(RPCError.Code.resourceExhausted.rawValue))
                        removed.formUnion(change.targetIds)
                    }
                    if change.targetChangeType == .current { current.formUnion(change.targetIds) }
                }
                #expect(removed == Set(Int32(limit + 1)...Int32(limit + 20)))
                await listener.close()
            }
        }
    }
}
