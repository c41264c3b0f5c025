import Foundation
import HearthCore
import HearthTesting
import Testing
import HearthServer

/// Single-field overrides end to end: `hearth serve --indexes FILE` with `fieldOverrides` exempting a field,
/// queries and aggregations that need it refused with `failed-precondition`, the others answered, and a
/// broken override refusing the start.
@Suite struct FieldOverrideHTTPTests {
    static let indexFile = """
        {"indexes": [], "fieldOverrides": [
          {"collectionGroup": "letters", "fieldPath": "body", "indexes": []},
          {"collectionGroup": "letters", "fieldPath": "tags", "indexes": [{"order": "ASCENDING", "queryScope": "COLLECTION"}]}
        ]}
        """

    @Test func exemptedFieldsAreStoredButNotQueryable() async throws {
        let file = try CompositeIndexHTTPTests.write(Self.indexFile)
        let server = try await TestServer.start { $0.indexesFile = file }
        let client = try server.client()
        for i in 0..<6 {
            let body = #"{"body": "letter \#(i)", "mood": "\#(i % 2 == 0 ? "calm" : "glad")", "tags": ["t\#(i % 3)"]}"#
            #expect(try await client.put("/v1/docs/letters/l\(i)", body).status == 200)
        }
        // The exempted field is stored and read back as any other.
        #expect(try await client.get("/v1/docs/letters/l1").json?["data"]?["body"]?.stringValue == "letter 1")

        let message = "the query needs the index of 'body' (its values) in 'letters', which a field override of the index file exempts; restore that index in the override, or add a composite index that serves the query"
        for query in [
            #"{"from": "letters", "where": [["body", "==", "letter 1"]]}"#,
            #"{"from": "letters", "orderBy": [{"field": "body"}], "limit": 2}"#,
            #"{"from": "letters", "where": [["mood", "==", "calm"], ["body", ">=", "letter"]]}"#,
        ] {
            let refused = try await client.query(query)
            #expect(refused.status == 412, "\(query): \(refused.text)")
            #expect(refused.json?["error"]?["code"]?.stringValue == "failed-precondition")
            #expect(refused.json?["error"]?["message"]?.stringValue == message, "\(refused.text)")
        }
        let contains = try await client.query(#"{"from": "letters", "where": [["tags", "array-contains", "t1"]]}"#)
        #expect(contains.status == 412)
        #expect(contains.json?["error"]?["message"]?.stringValue?.contains("'tags' (its array elements)") == true, "\(contains.text)")
        let count = try await client.aggregate(#"{"query": {"from": "letters", "where": [["body", "!=", "x"]]}, "aggregations": {"n": {"count": {}}}}"#)
        #expect(count.status == 412, "\(count.text)")

        // A listener's query is refused alike; another on the same connection still runs.
        let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
        try await ws.listen("body", query: #"{"from": "letters", "where": [["body", "==", "letter 1"]]}"#)
        let error = try await ws.expect("error", id: "body")
        #expect(error["code"]?.stringValue == "failed-precondition" && error["message"]?.stringValue == message, "\(error)")
        try await ws.listen("mood", query: #"{"from": "letters", "where": [["mood", "==", "glad"]]}"#)
        try await ws.expect("snapshot", id: "mood")
        #expect(ws.views["mood"]?.map(\.path.id) == ["l1", "l3", "l5"])
        await ws.close()

        // Queries on the fields that keep their entries answer as before.
        let calm = try await client.query(#"{"from": "letters", "where": [["mood", "==", "calm"]], "orderBy": [{"field": "tags", "direction": "desc"}]}"#)
        #expect(calm.status == 200, "\(calm.text)")
        let ids: [String]? = { if case .array(let docs)? = calm.json?["documents"] { return docs.compactMap { $0["id"]?.stringValue } }; return nil }()
        #expect(ids == ["l2", "l4", "l0"], "\(calm.text)")
        let all = try await client.aggregate(#"{"query": {"from": "letters", "where": [["tags", "==", ["t0"]]]}, "aggregations": {"n": {"count": {}}}}"#)
        #expect(all.json?["result"]?["n"] == .int(2), "\(all.text)")
        await server.stop()
    }

    @Test func theCheckCommandPrintsWhatAFileKeepsOrItsMistake() async throws {
        let file = try CompositeIndexHTTPTests.write(#"""
            {"indexes": [{"collectionGroup": "letters", "fields": [{"fieldPath": "mood", "order": "ASCENDING"}, {"fieldPath": "sentAt", "order": "DESCENDING"}]}],
             "fieldOverrides": [{"collectionGroup": "letters", "fieldPath": "body", "indexes": []},
                                {"collectionGroup": "letters", "fieldPath": "tags", "indexes": [{"arrayConfig": "CONTAINS"}]}]}
            """#)
        let (status, output) = try await HearthCLI.run(["indexes", "check", file])
        #expect(status == 0)
        #expect(output == """
            \(file): OK (1 composite index, 2 field overrides)
              index letters (mood asc, sentAt desc)
              override letters, field body and its subfields: not indexed
              override letters, field tags and its subfields: array elements only (array-contains, no ==, ranges or ordering)

            """, "\(output)")
        let broken = try CompositeIndexHTTPTests.write(#"{"fieldOverrides": [{"collectionGroup": "letters", "fieldPath": "body", "indexes": [], "ttl": true}]}"#)
        let (brokenStatus, brokenOutput) = try await HearthCLI.run(["indexes", "check", broken])
        #expect(brokenStatus != 0)
        #expect(brokenOutput.contains("index file \(broken): fieldOverrides[0]: TTL policies (\"ttl\": true) are not supported"), "\(brokenOutput)")
    }

    @Test func aBrokenOverrideStopsTheServerFromStarting() async throws {
        let file = try CompositeIndexHTTPTests.write(#"{"fieldOverrides": [{"collectionGroup": "letters", "fieldPath": "body", "indexes": [{"order": "SIDEWAYS"}]}]}"#)
        let (status, output) = try await HearthCLI.run(["serve", "--port", "0", "--data", TestFolders.make(), "--indexes", file])
        #expect(status != 0)
        #expect(output.contains("index file \(file): fieldOverrides[0].indexes[0] needs exactly one of \"order\": ASCENDING or DESCENDING, or \"arrayConfig\": CONTAINS"), "\(output)")
    }
}
