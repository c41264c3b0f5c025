import Foundation
import GRPCCore
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// RunQuery and RunAggregationQuery over gRPC: each query of the table against the same documents.
@Suite struct FirestoreQueryTests {
    typealias Q = Google_Firestore_V1_StructuredQuery

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let query: @Sendable (FirestoreTestClient) -> Q
        let ids: [String]
        var parent = ""
        var testDescription: String { name }
    }

    /// `cities/{id}`: population and region; `cities/sf/landmarks/{id}` for collection groups.
    static func seed(_ firestore: FirestoreTestClient) async throws {
        let cities: [(String, Int64, String)] = [("sf", 870, "west"), ("la", 3900, "west"), ("dc", 690, "east"),
                                                  ("tok", 14000, "asia"), ("bj", 21500, "asia")]
        var writes = cities.map { firestore.set("cities/\($0.0)", ["population": .int($0.1), "region": .string($0.2)]) }
        writes.append(firestore.set("cities/sf/landmarks/bridge", ["kind": .string("bridge")]))
        writes.append(firestore.set("cities/bj/landmarks/palace", ["kind": .string("palace")]))
        writes.append(firestore.set("parks/landmarks/landmarks/other", ["kind": .string("lake")]))
        _ = try await firestore.commit(writes)
    }

    static let cases: [Case] = [
        Case(name: "a collection, by name", query: { _ in .from("cities") }, ids: ["bj", "dc", "la", "sf", "tok"]),
        Case(name: "equality", query: { _ in
            var q = Q.from("cities"); q.where = Q.fieldFilter("region", .equal, .string("west")); return q
        }, ids: ["la", "sf"]),
        Case(name: "range, ordered by the field", query: { _ in
            var q = Q.from("cities"); q.where = Q.fieldFilter("population", .greaterThan, .int(800)); return q
        }, ids: ["sf", "la", "tok", "bj"]),
        Case(name: "or", query: { _ in
            var q = Q.from("cities")
            q.where = Q.composite(.or, [Q.fieldFilter("region", .equal, .string("east")), Q.fieldFilter("population", .greaterThan, .int(20000))])
            return q
        }, ids: ["dc", "bj"]),  // the inequality's field orders the results
        Case(name: "in", query: { _ in
            var q = Q.from("cities")
            q.where = Q.composite(.and, [Q.fieldFilter("region", .in, .array([.string("asia"), .string("west")])),
                                         Q.fieldFilter("population", .greaterThanOrEqual, .int(1000))])
            return q
        }, ids: ["la", "tok", "bj"]),
        Case(name: "not-in", query: { _ in
            var q = Q.from("cities"); q.where = Q.fieldFilter("population", .notIn, .array([.int(870), .int(690)])); return q
        }, ids: ["la", "tok", "bj"]),
        Case(name: "descending, limit and offset", query: { _ in
            var q = Q.from("cities"); q.orderBy = [Q.order("population", .descending)]; q.limit = .init(2); q.offset = 1; return q
        }, ids: ["tok", "la"]),
        Case(name: "start after and end at", query: { _ in
            var q = Q.from("cities"); q.orderBy = [Q.order("population")]
            q.startAt = .with { $0.values = [.int(690)]; $0.before = false }
            q.endAt = .with { $0.values = [.int(3900)]; $0.before = false }
            return q
        }, ids: ["sf", "la"]),
        Case(name: "a cursor on the name", query: { f in
            var q = Q.from("cities")
            q.startAt = .with { $0.values = [.with { $0.referenceValue = f.name("cities/la") }]; $0.before = true }
            return q
        }, ids: ["la", "sf", "tok"]),
        Case(name: "a collection group", query: { _ in .from("landmarks", allDescendants: true) }, ids: ["palace", "bridge", "other"]),
        Case(name: "a collection group under a document", query: { _ in .from("landmarks", allDescendants: true) },
             ids: ["bridge"], parent: "cities/sf"),
        Case(name: "a subcollection", query: { _ in .from("landmarks") }, ids: ["palace"], parent: "cities/bj"),
        Case(name: "is null finds nothing", query: { _ in
            var q = Q.from("cities")
            q.where = .with { $0.unaryFilter = .with { $0.op = .isNull; $0.field = .with { $0.fieldPath = "region" } } }
            return q
        }, ids: []),
    ]

    @Test(arguments: cases)
    func query(_ c: Case) async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                try await Self.seed(firestore)
                #expect(ids(try await firestore.query(c.query(firestore), parent: c.parent)) == c.ids)
            }
        }
    }

    @Test func projectionKeepsOnlyTheSelectedFields() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                try await Self.seed(firestore)
                var q = Q.from("cities")
                q.select = .with { $0.fields = [.with { $0.fieldPath = "region" }] }
                let docs = try await firestore.query(q)
                #expect(docs.count == 5 && docs.allSatisfy { Array($0.fields.keys) == ["region"] })
            }
        }
    }

    @Test func aggregationsCountSumAverage() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                try await Self.seed(firestore)
                let request = Google_Firestore_V1_RunAggregationQueryRequest.with {
                    $0.parent = firestore.name("")
                    $0.structuredAggregationQuery = .with {
                        $0.structuredQuery = .from("cities")
                        $0.aggregations = [
                            .with { $0.alias = "n"; $0.count = .init() },
                            .with { $0.alias = "capped"; $0.count = .with { $0.upTo = .init(3) } },
                            .with { $0.alias = "total"; $0.sum = .with { $0.field = .with { $0.fieldPath = "population" } } },
                            .with { $0.alias = "mean"; $0.avg = .with { $0.field = .with { $0.fieldPath = "population" } } },
                        ]
                    }
                }
                let fields = try await firestore.stub.runAggregationQuery(request, metadata: firestore.metadata) { response in
                    var out: [String: Google_Firestore_V1_Value] = [:]
                    for try await message in response.messages { out = message.result.aggregateFields }
                    return out
                }
                #expect(fields == ["n": .int(5), "capped": .int(3), "total": .int(40960), "mean": .double(8192)])
            }
        }
    }
}
