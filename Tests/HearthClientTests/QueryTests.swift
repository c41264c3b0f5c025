import Foundation
import HearthClient
import HearthCore
import HearthTesting
import Testing

/// Queries and aggregations through the client, over the cities of docs/api.md.
@Suite struct QueryTests {
    struct City: Codable {
        @DocumentID var id: String?
        var name: String
        var state: String?
        var country: String
        var population: Int
        var regions: [String]
    }

    static func seed(_ db: Hearth) async throws {
        let cities = db.collection("cities")
        let batch = db.batch()
        for (id, city) in [
            ("SF", City(name: "San Francisco", state: "CA", country: "USA", population: 860_000, regions: ["west_coast", "norcal"])),
            ("LA", City(name: "Los Angeles", state: "CA", country: "USA", population: 3_900_000, regions: ["west_coast", "socal"])),
            ("SD", City(name: "San Diego", state: "CA", country: "USA", population: 1_400_000, regions: ["west_coast", "socal"])),
            ("DC", City(name: "Washington", state: nil, country: "USA", population: 690_000, regions: ["east_coast"])),
            ("TOK", City(name: "Tokyo", state: nil, country: "Japan", population: 9_000_000, regions: ["kanto", "honshu"])),
        ] {
            batch.setData(from: city, forDocument: cities.document(id))
        }
        batch.setData(["name": "Golden Gate Bridge", "type": "bridge"], forDocument: db.document("cities/SF/landmarks/bridge"))
        batch.setData(["name": "Griffith Park", "type": "park"], forDocument: db.document("cities/LA/landmarks/park"))
        try await batch.commit()
    }

    static func ids(_ query: some QueryBuilding) async throws -> [String] {
        try await query.query.getDocuments().documents.map(\.documentID)
    }

    @Test func filtersOrdersLimitsAndCursors() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
            try await Self.seed(db)
            let cities = db.collection("cities")
            #expect(try await Self.ids(cities) == ["DC", "LA", "SD", "SF", "TOK"])
            #expect(try await Self.ids(cities.whereField("state", isEqualTo: "CA")) == ["LA", "SD", "SF"])
            #expect(try await Self.ids(cities.whereField("country", isNotEqualTo: "USA")) == ["TOK"])
            #expect(try await Self.ids(cities.whereField("population", isGreaterThan: 1_000_000).order(by: "population", descending: true))
                    == ["TOK", "LA", "SD"])
            #expect(try await Self.ids(cities.whereField("population", isLessThanOrEqualTo: 860_000)) == ["DC", "SF"])
            #expect(try await Self.ids(cities.whereField("country", in: ["Japan", "Mexico"])) == ["TOK"])
            #expect(try await Self.ids(cities.whereField("country", notIn: ["USA"])) == ["TOK"])
            #expect(try await Self.ids(cities.whereField("regions", arrayContains: "socal")) == ["LA", "SD"])
            #expect(try await Self.ids(cities.whereField("regions", arrayContainsAny: ["kanto", "east_coast"])) == ["DC", "TOK"])
            #expect(try await Self.ids(cities.whereFilter(.orFilter([.whereField("name", isEqualTo: "Tokyo"),
                                                                      .whereField("population", isLessThan: 700_000)]))) == ["DC", "TOK"])
            let byPopulation = cities.order(by: "population")
            #expect(try await Self.ids(byPopulation.limit(to: 2)) == ["DC", "SF"])
            #expect(try await Self.ids(byPopulation.limit(toLast: 2)) == ["LA", "TOK"])
            #expect(try await Self.ids(byPopulation.start(after: [860_000]).end(at: [3_900_000])) == ["SD", "LA"])
            #expect(try await Self.ids(byPopulation.offset(3)) == ["LA", "TOK"])
            let sd = try await cities.document("SD").getDocument()
            #expect(try await Self.ids(byPopulation.start(afterDocument: sd)) == ["LA", "TOK"])
            #expect(try await Self.ids(byPopulation.end(beforeDocument: sd)) == ["DC", "SF"])

            let selected = try await cities.whereField("state", isEqualTo: "CA").select(["name"]).getDocuments()
            #expect(selected.documents.allSatisfy { $0.data()?.keys.sorted() == ["name"] })
            let typed = try await cities.whereField("country", isEqualTo: "Japan").getDocuments().documents.map { try $0.data(as: City.self) }
            #expect(typed.map(\.name) == ["Tokyo"] && typed.first?.id == "TOK")

            #expect(try await Self.ids(db.collectionGroup("landmarks")) == ["park", "bridge"], "in path order")
            let landmarks = try await db.collectionGroup("landmarks").whereField("type", isEqualTo: "bridge").getDocuments()
            #expect(landmarks.documents.map(\.reference.path) == ["cities/SF/landmarks/bridge"])
        }
    }

    @Test func aggregations() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
            try await Self.seed(db)
            let usa = db.collection("cities").whereField("country", isEqualTo: "USA")
            #expect(try await usa.count.getAggregation().count == 4)
            let result = try await usa.aggregate([.count(upTo: 3), .sum("population"), .average("population")]).getAggregation()
            #expect(result.count == 3)
            #expect(result.get(.sum("population")) == .int(6_850_000))
            #expect(result.get(.average("population")) == .double(1_712_500))
            #expect(try await db.collection("cities").whereField("country", isEqualTo: "Nowhere").aggregate([.average("population")])
                        .getAggregation().get(.average("population")) == .null)
        }
    }

    /// An invalid query is the server's `invalid-argument`, with Firestore's reason; an operand with no Hearth
    /// value is refused by the client before any request.
    @Test func badQueries() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
            let cities = db.collection("cities")
            let twoNotEquals = await #expect(throws: HearthClientError.self) {
                try await cities.whereField("a", isNotEqualTo: 1).whereField("b", isNotEqualTo: 2).getDocuments()
            }
            #expect(twoNotEquals?.status == 400 && twoNotEquals?.code == .invalidArgument)
            let lastWithoutOrder = await #expect(throws: HearthClientError.self) { try await cities.limit(toLast: 1).getDocuments() }
            #expect(lastWithoutOrder?.status == 400)
            let badOperand = await #expect(throws: HearthClientError.self) {
                try await cities.whereField("a", isEqualTo: NSObject()).getDocuments()
            }
            #expect(badOperand?.status == nil && badOperand?.code == .invalidArgument)
        }
    }
}
