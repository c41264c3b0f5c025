import Foundation
import GRPCCore
import HearthCore
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// Requests Firestore refuses answer its status code, and change nothing.
@Suite struct FirestoreBadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let code: RPCError.Code
        let call: @Sendable (FirestoreTestClient) async throws -> Void
        var testDescription: String { name }
    }

    static func commit(_ f: FirestoreTestClient, _ writes: [Google_Firestore_V1_Write], database: String? = nil,
                       transaction: Data = Data()) async throws {
        _ = try await f.stub.commit(.with {
            $0.database = database ?? f.database
            $0.writes = writes
            $0.transaction = transaction
        }, metadata: f.metadata)
    }

    static let cases: [Case] = [
        Case(name: "a name of the wrong shape", code: .invalidArgument) { f in
            _ = try await f.stub.getDocument(.with { $0.name = "projects/p/databases/d/docs/x" }, metadata: f.metadata)
        },
        Case(name: "a collection's name for a document", code: .invalidArgument) { f in
            try await commit(f, [.with { $0.update = .with { $0.name = f.name("things") } }])
        },
        Case(name: "a reserved id", code: .invalidArgument) { f in
            try await commit(f, [f.set("things/__x__", ["a": .int(1)])])
        },
        Case(name: "a database id Firestore does not allow", code: .invalidArgument) { f in
            try await commit(f, [f.set("things/a", ["a": .int(1)])], database: "projects/test/databases/Bad_Id")
        },
        Case(name: "a write to a document of another database", code: .invalidArgument) { f in
            try await commit(f, [f.set("things/a", ["a": .int(1)])], database: "projects/test/databases/other-db")
        },
        Case(name: "a document over 1 MiB", code: .invalidArgument) { f in
            try await commit(f, [f.set("things/a", ["big": .string(String(repeating: "x", count: 1_100_000))])])
        },
        Case(name: "501 writes in one commit", code: .invalidArgument) { f in
            try await commit(f, (0...500).map { f.set("things/\($0)", ["a": .int(1)]) })
        },
        Case(name: "an array in an array", code: .invalidArgument) { f in
            try await commit(f, [f.set("things/a", ["a": .array([.array([])])])])
        },
        Case(name: "a latitude out of range", code: .invalidArgument) { f in
            try await commit(f, [f.set("things/a", ["g": .with { $0.geoPointValue = .with { $0.latitude = 91 } }])])
        },
        Case(name: "a write with no operation", code: .invalidArgument) { f in
            try await commit(f, [Google_Firestore_V1_Write()])
        },
        Case(name: "a transaction that was never issued", code: .invalidArgument) { f in
            try await commit(f, [f.set("things/a", ["a": .int(1)])], transaction: Data("never-issued".utf8))
        },
        Case(name: "!= with not-in", code: .invalidArgument) { f in
            var q = Google_Firestore_V1_StructuredQuery.from("things")
            typealias Q = Google_Firestore_V1_StructuredQuery
            q.where = Q.composite(.and, [Q.fieldFilter("a", .notEqual, .int(1)), Q.fieldFilter("b", .notIn, .array([.int(2)]))])
            _ = try await f.query(q)
        },
        Case(name: "a query of two collections", code: .invalidArgument) { f in
            var q = Google_Firestore_V1_StructuredQuery.from("things")
            q.from.append(.with { $0.collectionID = "others" })
            _ = try await f.query(q)
        },
        Case(name: "reading at a past time", code: .invalidArgument) { f in
            _ = try await f.stub.getDocument(.with {
                $0.name = f.name("things/a")
                $0.readTime = Google_Protobuf_Timestamp(seconds: 1_700_000_000)
            }, metadata: f.metadata)
        },
        Case(name: "a missing document", code: .notFound) { f in
            _ = try await f.get("things/nothing")
        },
        Case(name: "PartitionQuery", code: .unimplemented) { f in
            _ = try await f.stub.partitionQuery(.with { $0.parent = f.name("") }, metadata: f.metadata)
        },
        Case(name: "vector search", code: .unimplemented) { f in
            var q = Google_Firestore_V1_StructuredQuery.from("things")
            q.findNearest = .with { $0.vectorField = .with { $0.fieldPath = "v" } }
            _ = try await f.query(q)
        },
    ]

    @Test(arguments: cases)
    func refused(_ c: Case) async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("things/kept", ["a": .int(0)])])
                do {
                    try await c.call(firestore)
                    Issue.record("answered, expected \(c.code)")
                } catch let error as RPCError {
                    #expect(error.code == c.code, "\(error)")
                }
                // Nothing changed: the one document is as it was, and no other was written.
                let listing = try await http.get("/v1/docs/things")
                let documents: JSON? = listing.json?["documents"]
                var count = -1
                if case .array(let items)? = documents { count = items.count }
                #expect(count == 1, "\(listing.text)")
            }
        }
    }

    @Test func namedDatabasesAreSeparate() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey, database: "other-db") { other in
                _ = try await other.commit([other.set("things/a", ["in": .string("other"),
                                                                   "ref": .with { $0.referenceValue = other.name("things/a") }])])
                let read = try await other.get("things/a")
                #expect(read.name == "projects/test/databases/other-db/documents/things/a")
                #expect(read.fields["ref"]?.referenceValue == other.name("things/a"))
                #expect(ids(try await other.query(.from("things"))) == ["a"])
                let roots = try await other.stub.listCollectionIds(.with { $0.parent = other.name("") }, metadata: other.metadata)
                #expect(roots.collectionIds == ["things"])
            }
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { main in
                await #expect(throws: RPCError.self) { try await main.get("things/a") }
                // A kindless query of the whole (default) database does not reach into the named one.
                #expect(try await main.query(.from("", allDescendants: true)).isEmpty)
                let roots = try await main.stub.listCollectionIds(.with { $0.parent = main.name("") }, metadata: main.metadata)
                #expect(roots.collectionIds == [])
            }
            #expect(try await http.get("/v1/docs/things/a").status == 404)
        }
    }

    /// The ids of the documents changed in a Listen snapshot.
    static func changed(_ responses: [Google_Firestore_V1_ListenResponse]) -> [String] {
        responses.compactMap { r in
            if case .documentChange(let c)? = r.responseType { return String(c.document.name.split(separator: "/").last!) }
            return nil
        }
    }

    @Test func collectionGroupsStayInTheirDatabase() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { main in
                try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey, database: "other-db") { other in
                    let listener = main.listen()
                    listener.send(.with {
                        $0.database = main.database
                        $0.addTarget = .with {
                            $0.targetID = 1
                            $0.query = .with { $0.parent = main.name(""); $0.structuredQuery = .from("rooms", allDescendants: true) }
                        }
                    })
                    _ = try await listener.nextSnapshot()
                    _ = try await main.commit([main.set("rooms/a", ["n": .int(1)]), main.set("houses/h/rooms/b", ["n": .int(2)])])
                    _ = try await other.commit([other.set("rooms/c", ["n": .int(3)]), other.set("houses/h/rooms/d", ["n": .int(4)])])
                    #expect(ids(try await main.query(.from("rooms", allDescendants: true))) == ["b", "a"])
                    #expect(ids(try await other.query(.from("rooms", allDescendants: true))) == ["d", "c"])
                    var ordered = Google_Firestore_V1_StructuredQuery.from("rooms", allDescendants: true)
                    ordered.orderBy = [Google_Firestore_V1_StructuredQuery.order("n", .descending)]
                    ordered.limit = .init(1)
                    #expect(ids(try await main.query(ordered)) == ["b"])
                    let count = try await main.stub.runAggregationQuery(.with {
                        $0.parent = main.name("")
                        $0.structuredAggregationQuery = .with {
                            $0.structuredQuery = .from("rooms", allDescendants: true)
                            $0.aggregations = [.with { $0.alias = "n"; $0.count = .init() }]
                        }
                    }, metadata: main.metadata) { response in
                        var out: [String: Google_Firestore_V1_Value] = [:]
                        for try await message in response.messages { out = message.result.aggregateFields }
                        return out
                    }
                    #expect(count == ["n": .int(2)])
                    let overHTTP = try await http.query(#"{"from": {"collectionGroup": "rooms"}}"#)
                    #expect(overHTTP.documentPaths.sorted() == ["houses/h/rooms/b", "rooms/a"], "\(overHTTP.text)")
                    // The (default) listener hears its own database's writes only: b and a, then e.
                    var heard: [String] = []
                    while heard.count < 2 {
                        heard += Self.changed(try await listener.nextSnapshot())
                    }
                    _ = try await other.commit([other.set("rooms/f", ["n": .int(6)])])
                    _ = try await main.commit([main.set("rooms/e", ["n": .int(5)])])
                    heard += Self.changed(try await listener.nextSnapshot())
                    #expect(heard.sorted() == ["a", "b", "e"])
                    await listener.close()
                }
            }
        }
    }
}
