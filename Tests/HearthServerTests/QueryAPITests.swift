import HearthCore
import HearthTesting
import Testing
import HTTPTypes

/// `POST /v1/query` and `POST /v1/aggregate` over real HTTP: every operator, cursor, limit, projection,
/// collection groups, aggregations, transactions, and each invalid-query error.
@Suite struct QueryAPITests {
    /// Firestore's sample `cities` dataset (from its query documentation), plus landmarks under two cities.
    static let cities: [(String, String)] = [
        ("cities/SF", #"{"name": "San Francisco", "state": "CA", "country": "USA", "capital": false, "population": 860000, "regions": ["west_coast", "norcal"]}"#),
        ("cities/LA", #"{"name": "Los Angeles", "state": "CA", "country": "USA", "capital": false, "population": 3900000, "regions": ["west_coast", "socal"]}"#),
        ("cities/DC", #"{"name": "Washington, D.C.", "state": null, "country": "USA", "capital": true, "population": 680000, "regions": ["east_coast"]}"#),
        ("cities/TOK", #"{"name": "Tokyo", "state": null, "country": "Japan", "capital": true, "population": 9000000, "regions": ["kanto", "honshu"]}"#),
        ("cities/BJ", #"{"name": "Beijing", "state": null, "country": "China", "capital": true, "population": 21500000, "regions": ["jingjinji", "hebei"]}"#),
        ("cities/SF/landmarks/golden", #"{"name": "Golden Gate Bridge", "type": "bridge"}"#),
        ("cities/SF/landmarks/legion", #"{"name": "Legion of Honor", "type": "museum"}"#),
        ("cities/BJ/landmarks/jingshan", #"{"name": "Jingshan Park", "type": "park"}"#),
        ("cities/BJ/landmarks/beijing", #"{"name": "Beijing Ancient Observatory", "type": "museum"}"#),
        ("landmarks/eiffel", #"{"name": "Eiffel Tower", "type": "tower"}"#),
    ]

    /// Field names may hold NUL (only ids may not): names that differ after it are indexed apart, so an
    /// equality the index decides alone neither returns nor counts the other's documents.
    @Test func fieldNamesDifferingAfterANULAreIndexedApart() async throws {
        try await TestServer.with { _, client in
            try await client.load([("c/d1", #"{"a\u0000b": 1}"#), ("c/d2", #"{"a\u0000c": 1}"#), ("c/d3", #"{"a": 1}"#)])
            let query = #"{"from": "c", "where": [["`a\u0000b`", "==", 1]]}"#
            #expect(try await client.query(query).documentIDs == ["d1"])
            let count = try await client.aggregate(#"{"query": \#(query), "aggregations": {"n": {"count": {}}}}"#)
            #expect(count.json?["result"]?["n"] == .int(1), "\(count.text)")
            #expect(try await client.query(#"{"from": "c", "where": [["a", "==", 1]]}"#).documentIDs == ["d3"])
        }
    }

    static func withCities(_ body: (HearthClient) async throws -> Void) async throws {
        try await TestServer.with { _, client in
            try await client.load(cities)
            try await body(client)
        }
    }

    /// Each case: a query body and the ids it returns, in order.
    static let cases: [(String, [String])] = [
        // operators
        (#"{"from": "cities", "where": [["state", "==", "CA"]]}"#, ["LA", "SF"]),
        (#"{"from": "cities", "where": [["capital", "!=", true]]}"#, ["LA", "SF"]),
        (#"{"from": "cities", "where": [["state", "!=", "CA"]]}"#, ["BJ", "DC", "TOK"]),
        (#"{"from": "cities", "where": [["population", "<", 860000]]}"#, ["DC"]),
        (#"{"from": "cities", "where": [["population", "<=", 860000]]}"#, ["DC", "SF"]),
        (#"{"from": "cities", "where": [["population", ">", 3900000]]}"#, ["TOK", "BJ"]),
        (#"{"from": "cities", "where": [["population", ">=", 3900000]]}"#, ["LA", "TOK", "BJ"]),
        (#"{"from": "cities", "where": [["population", ">", 1.5]]}"#, ["DC", "SF", "LA", "TOK", "BJ"]),
        (#"{"from": "cities", "where": [["population", ">", "a string"]]}"#, []),
        (#"{"from": "cities", "where": [["regions", "array-contains", "west_coast"]]}"#, ["LA", "SF"]),
        (#"{"from": "cities", "where": [["regions", "array-contains-any", ["west_coast", "east_coast"]]]}"#, ["DC", "LA", "SF"]),
        (#"{"from": "cities", "where": [["country", "in", ["USA", "Japan"]]]}"#, ["DC", "LA", "SF", "TOK"]),
        (#"{"from": "cities", "where": [["country", "not-in", ["USA", "Japan"]]]}"#, ["BJ"]),
        (#"{"from": "cities", "where": [["state", "not-in", ["CA"]]]}"#, []),
        (#"{"from": "cities", "where": [["state", "==", null]]}"#, ["BJ", "DC", "TOK"]),
        (#"{"from": "cities", "where": [["regions", "==", ["west_coast", "norcal"]]]}"#, ["SF"]),
        (#"{"from": "cities", "where": [["__name__", "==", {"$ref": "cities/LA"}]]}"#, ["LA"]),
        (#"{"from": "cities", "where": [["__name__", ">", {"$ref": "cities/LA"}]]}"#, ["SF", "TOK"]),
        // and / or
        (#"{"from": "cities", "where": {"and": [{"field": "state", "op": "==", "value": "CA"}, {"field": "population", "op": ">", "value": 1000000}]}}"#, ["LA"]),
        (#"{"from": "cities", "where": {"or": [{"field": "capital", "op": "==", "value": true}, {"field": "population", "op": ">", "value": 1000000}]}}"#, ["DC", "LA", "TOK", "BJ"]),
        (#"{"from": "cities", "where": {"and": [{"field": "country", "op": "==", "value": "USA"}, {"or": [{"field": "capital", "op": "==", "value": true}, {"field": "state", "op": "==", "value": "CA"}]}]}}"#, ["DC", "LA", "SF"]),
        // ordering and the existence rule
        (#"{"from": "cities", "orderBy": [{"field": "population", "direction": "desc"}]}"#, ["BJ", "TOK", "LA", "SF", "DC"]),
        (#"{"from": "cities", "orderBy": [{"field": "state"}, {"field": "population", "direction": "desc"}]}"#, ["BJ", "TOK", "DC", "LA", "SF"]),
        (#"{"from": "cities", "where": [["country", "==", "USA"]], "orderBy": [{"field": "population"}]}"#, ["DC", "SF", "LA"]),
        (#"{"from": "cities", "orderBy": [{"field": "nickname"}]}"#, []),
        // limits and offset
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "limit": 2}"#, ["DC", "SF"]),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "limitToLast": 2}"#, ["TOK", "BJ"]),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "offset": 1, "limit": 2}"#, ["SF", "LA"]),
        // cursors
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "startAt": [860000]}"#, ["SF", "LA", "TOK", "BJ"]),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "startAfter": [860000]}"#, ["LA", "TOK", "BJ"]),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "endAt": [3900000]}"#, ["DC", "SF", "LA"]),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "endBefore": [3900000]}"#, ["DC", "SF"]),
        (#"{"from": "cities", "orderBy": [{"field": "state"}], "startAfter": [null, {"$ref": "cities/DC"}]}"#, ["TOK", "LA", "SF"]),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "startAfter": "cities/SF"}"#, ["LA", "TOK", "BJ"]),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "endBefore": "cities/TOK", "limitToLast": 1}"#, ["LA"]),
        // collection groups
        (#"{"from": {"collectionGroup": "landmarks"}, "where": [["type", "==", "museum"]]}"#, ["beijing", "legion"]),
        (#"{"from": {"collectionGroup": "landmarks"}, "orderBy": [{"field": "name"}]}"#, ["beijing", "eiffel", "golden", "jingshan", "legion"]),
        (#"{"from": {"collectionGroup": "landmarks", "under": "cities/SF"}}"#, ["golden", "legion"]),
        (#"{"from": "cities/BJ/landmarks", "orderBy": [{"field": "name", "direction": "desc"}]}"#, ["jingshan", "beijing"]),
        // A root collection shares its id with subcollections: its query returns only its own documents.
        (#"{"from": "landmarks"}"#, ["eiffel"]),
        (#"{"from": "landmarks", "orderBy": [{"field": "name"}]}"#, ["eiffel"]),
        (#"{"from": "landmarks", "where": [["type", "in", ["museum", "tower"]]]}"#, ["eiffel"]),
    ]

    @Test func operatorsOrdersCursorsAndGroups() async throws {
        try await Self.withCities { client in
            for (body, expected) in Self.cases {
                let result = try await client.query(body)
                #expect(result.status == 200, "\(body): \(result.text)")
                #expect(result.documentIDs == expected, "\(body)")
                #expect(result.json?["readTime"]?.stringValue?.hasSuffix("Z") == true)
            }
        }
    }

    @Test func selectProjects() async throws {
        try await Self.withCities { client in
            let result = try await client.query(#"{"from": "cities", "where": [["state", "==", "CA"]], "select": ["name"]}"#)
            #expect(result.status == 200)
            guard case .array(let docs)? = result.json?["documents"] else { Issue.record("no documents"); return }
            #expect(docs.map { $0["data"] } == [.object([("name", .string("Los Angeles"))]), .object([("name", .string("San Francisco"))])])
        }
    }

    @Test func aggregations() async throws {
        try await Self.withCities { client in
            let all = try await client.aggregate(#"""
                {"query": {"from": "cities"}, "aggregations": {"n": {"count": {}}, "total": {"sum": "population"}, "mean": {"avg": "population"}}}
                """#)
            #expect(all.status == 200, "\(all.text)")
            #expect(all.json?["result"]?["n"] == .int(5))
            #expect(all.json?["result"]?["total"] == .int(35_940_000))
            #expect(all.json?["result"]?["mean"] == .double(7_188_000))
            #expect(all.text.hasPrefix(#"{"result":{"n":5,"total":35940000,"mean":7188000.0}"#))

            let capped = try await client.aggregate(#"{"query": {"from": "cities", "where": [["country", "==", "USA"]]}, "aggregations": {"n": {"count": {"upTo": 2}}}}"#)
            #expect(capped.json?["result"]?["n"] == .int(2))
            let none = try await client.aggregate(#"{"query": {"from": "cities", "where": [["country", "==", "France"]]}, "aggregations": {"n": {"count": {}}, "s": {"sum": "population"}, "a": {"avg": "population"}}}"#)
            #expect(none.json?["result"]?["n"] == .int(0))
            #expect(none.json?["result"]?["s"] == .int(0))
            #expect(none.json?["result"]?["a"] == .null)
            let range = try await client.aggregate(#"{"query": {"from": "cities", "where": [["population", ">=", 3900000]]}, "aggregations": {"n": {"count": {}}}}"#)
            #expect(range.json?["result"]?["n"] == .int(3))
            let group = try await client.aggregate(#"{"query": {"from": {"collectionGroup": "landmarks"}}, "aggregations": {"n": {"count": {}}}}"#)
            #expect(group.json?["result"]?["n"] == .int(5))
            let root = try await client.aggregate(#"{"query": {"from": "landmarks"}, "aggregations": {"n": {"count": {}}}}"#)
            #expect(root.json?["result"]?["n"] == .int(1))
            let rootTyped = try await client.aggregate(#"{"query": {"from": "landmarks", "where": [["type", "==", "tower"]]}, "aggregations": {"n": {"count": {}}}}"#)
            #expect(rootTyped.json?["result"]?["n"] == .int(1))

            // Sums of doubles are doubles; non-numbers are skipped.
            try await client.load([("scores/a", #"{"v": 1.5}"#), ("scores/b", #"{"v": 2}"#), ("scores/c", #"{"v": "x"}"#)])
            let mixed = try await client.aggregate(#"{"query": {"from": "scores"}, "aggregations": {"s": {"sum": "v"}, "a": {"avg": "v"}}}"#)
            #expect(mixed.json?["result"]?["s"] == .double(3.5))
            #expect(mixed.json?["result"]?["a"] == .double(1.75))
        }
    }

    @Test func indexFollowsWrites() async throws {
        try await Self.withCities { client in
            _ = try await client.patch("/v1/docs/cities/SF", #"{"population": 5000000, "regions": ["bay"]}"#)
            #expect(try await client.query(#"{"from": "cities", "where": [["population", ">", 4000000]], "orderBy": [{"field": "population"}]}"#).documentIDs == ["SF", "TOK", "BJ"])
            #expect(try await client.query(#"{"from": "cities", "where": [["regions", "array-contains", "west_coast"]]}"#).documentIDs == ["LA"])
            #expect(try await client.query(#"{"from": "cities", "where": [["regions", "array-contains", "bay"]]}"#).documentIDs == ["SF"])
            _ = try await client.delete("/v1/docs/cities/LA")
            #expect(try await client.query(#"{"from": "cities", "where": [["state", "==", "CA"]]}"#).documentIDs == ["SF"])
            #expect(try await client.query(#"{"from": {"collectionGroup": "cities"}}"#).documentIDs == ["BJ", "DC", "SF", "TOK"])
        }
    }

    @Test func transactionsRecordQueryReads() async throws {
        try await Self.withCities { client in
            for style in ["parameter", "body"] {
                let id = try #require(try await client.post("/v1/transactions").json?["transaction"]?.stringValue)
                let q = #"{"from": "cities", "where": [["state", "==", "CA"]]}"#
                let result = style == "body"
                    ? try await client.query(#"{"from": "cities", "where": [["state", "==", "CA"]], "transaction": "\#(id)"}"#)
                    : try await client.query(q, transaction: id)
                #expect(result.documentIDs == ["LA", "SF"])
                // A document the query read changes: the commit aborts.
                _ = try await client.patch("/v1/docs/cities/SF", #"{"note": "\#(style)"}"#)
                let commit = try await client.post("/v1/commit", #"{"transaction": "\#(id)", "writes": [{"set": "cities/X", "data": {}}]}"#)
                #expect(commit.status == 409)
                #expect(commit.errorCode == "aborted")
            }
            let id = try #require(try await client.post("/v1/transactions").json?["transaction"]?.stringValue)
            let count = try await client.aggregate(#"{"query": {"from": "cities", "where": [["capital", "==", true]]}, "aggregations": {"n": {"count": {}}}}"#, transaction: id)
            #expect(count.json?["result"]?["n"] == .int(3))
            _ = try await client.patch("/v1/docs/cities/DC", #"{"note": "changed"}"#)
            let commit = try await client.post("/v1/commit", #"{"transaction": "\#(id)", "writes": [{"set": "cities/Y", "data": {}}]}"#)
            #expect(commit.errorCode == "aborted")

            let mismatch = try await client.request(.post, "/v1/query?transaction=abc", json: #"{"from": "cities", "transaction": "def"}"#)
            #expect(mismatch.status == 400)
            let unknown = try await client.query(#"{"from": "cities"}"#, transaction: "nope")
            #expect(unknown.status == 400)
        }
    }

    /// Each invalid query: 400 `invalid-argument` with Firestore's reason, and nothing changes.
    static let invalid: [(String, String)] = [
        (#"{"from": "cities", "where": [["a", "not-in", [1]], ["b", "!=", 2]]}"#, "'not-in' filters with '!='"),
        (#"{"from": "cities", "where": [["a", "!=", 1], ["b", "!=", 2]]}"#, "more than one '!='"),
        (#"{"from": "cities", "where": [["a", "in", [\#((0...30).map(String.init).joined(separator: ","))]]]}"#, "maximum of 30 elements"),
        (#"{"from": "cities", "where": [["a", "in", [1, 2, 3, 4, 5, 6]], ["b", "in", [1, 2, 3, 4, 5, 6]]]}"#, "disjunctions"),
        (#"{"from": "cities", "where": [["a", "in", []]]}"#, "non-empty array"),
        (#"{"from": "cities", "where": [["a", "<", null]]}"#, "Null only supports"),
        (#"{"from": "cities", "where": [["a", "array-contains", 1], ["b", "array-contains", 2]]}"#, "more than one 'array-contains'"),
        (#"{"from": "cities", "orderBy": [{"field": "a"}], "startAt": [1, {"$ref": "cities/SF"}, 3]}"#, "Too many arguments"),
        (#"{"from": "cities", "orderBy": [{"field": "population"}], "startAt": "cities/nowhere"}"#, "does not exist"),
        (#"{"from": "cities", "limitToLast": 2}"#, "limitToLast queries require"),
        (#"{"from": "cities", "limit": 0}"#, "limit must be a positive number"),
        (#"{"from": "cities", "where": [["__name__", "array-contains", "SF"]]}"#, "queries on __name__"),
        (#"{"from": "cities", "colour": "red"}"#, "colour"),
    ]

    @Test func invalidQueriesAreRejected() async throws {
        try await Self.withCities { client in
            for (body, reason) in Self.invalid {
                let result = try await client.query(body)
                #expect(result.status == 400, "\(body)")
                #expect(result.errorCode == "invalid-argument", "\(body)")
                #expect(result.errorMessage?.contains(reason) == true, "\(body): \(result.errorMessage ?? result.text)")
            }
            let badAggregate = try await client.aggregate(#"{"query": {"from": "cities"}, "aggregations": {"n": {"count": {"upTo": 0}}}}"#)
            #expect(badAggregate.status == 400)
            #expect(badAggregate.errorMessage?.contains("upTo") == true)
            let noAggregations = try await client.aggregate(#"{"query": {"from": "cities"}, "aggregations": {}}"#)
            #expect(noAggregations.errorCode == "invalid-argument")
            #expect(try await client.query(#"{"from": "cities"}"#).documentIDs == ["BJ", "DC", "LA", "SF", "TOK"])
        }
    }

    @Test func queriesNeedPermission() async throws {
        try await Self.withCities { client in
            let result = try await client.query(#"{"from": "cities"}"#, as: .nobody)
            #expect(result.status == 403 || result.status == 401)
        }
    }

    @Test func entriesPerDocumentAreBounded() async throws {
        try await TestServer.with { _, client in
            let big = "[" + (0..<40_001).map(String.init).joined(separator: ",") + "]"
            let result = try await client.put("/v1/docs/big/one", #"{"items": \#(big)}"#)
            #expect(result.status == 400)
            #expect(result.errorMessage?.contains("index entries") == true)
            #expect(try await client.get("/v1/docs/big/one").status == 404)
            // Equal elements are one entry: 40,001 of them fit (three entries in all), and are found.
            let same = "[" + Array(repeating: "7", count: 40_001).joined(separator: ",") + "]"
            #expect(try await client.put("/v1/docs/big/two", #"{"items": \#(same)}"#).status == 200)
            #expect(try await client.query(#"{"from": "big", "where": [["items", "array-contains", 7]]}"#).documentIDs == ["two"])
        }
    }
}
