import Foundation
import HearthCore
import HearthTesting
import Testing
import HearthServer

/// Composite indexes end to end: `hearth serve --indexes FILE` refuses a broken file, and queries answer
/// the same with the index as without it, including after the index is added to a database with data.
@Suite struct CompositeIndexHTTPTests {
    static let indexFile = """
        {"indexes": [{"collectionGroup": "posts", "queryScope": "COLLECTION",
          "fields": [{"fieldPath": "published", "order": "ASCENDING"}, {"fieldPath": "views", "order": "DESCENDING"}]}]}
        """
    static let query = #"{"from": "posts", "where": [["published", "==", true], ["views", ">=", 5]], "orderBy": [{"field": "views", "direction": "desc"}], "limit": 20}"#
    static let count = #"{"query": {"from": "posts", "where": [["published", "==", true], ["views", ">=", 5]]}, "aggregations": {"n": {"count": {}}}}"#

    static func write(_ text: String) throws -> String {
        let path = TestFolders.make() + "/firestore.indexes.json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func seed(_ client: HearthClient) async throws {
        var writes: [String] = []
        for i in 0..<120 {
            let views = i % 3 == 0 ? "\"many\"" : String((i * 37) % 50)  // some views are strings, never >= 5
            writes.append(#"{"set": "posts/p\#(i)", "data": {"published": \#(i % 2 == 0), "views": \#(views)}}"#)
        }
        writes.append(#"{"set": "posts/nolikes", "data": {"published": true}}"#)
        writes.append(#"{"set": "users/u/posts/x", "data": {"published": true, "views": 99}}"#)
        #expect(try await client.post("/v1/commit", #"{"writes": [\#(writes.joined(separator: ","))]}"#).status == 200)
    }

    /// The ids a query answers and the count, as a server gives them.
    static func answers(_ client: HearthClient) async throws -> ([String], JSON?) {
        let result = try await client.post("/v1/query", query)
        #expect(result.status == 200, "\(result.text)")
        guard case .array(let docs)? = result.json?["documents"] else { return ([], nil) }
        let count = try await client.post("/v1/aggregate", count)
        #expect(count.status == 200, "\(count.text)")
        return (docs.compactMap { $0["id"]?.stringValue }, count.json?["result"]?["n"])
    }

    @Test func queriesAnswerTheSameWithTheIndexAndAfterItIsAdded() async throws {
        let file = try Self.write(Self.indexFile)
        let plain = try await TestServer.start()
        try await Self.seed(plain.client())
        let expected = try await Self.answers(plain.client())
        await plain.stop()
        #expect(expected.0.count == 20)

        let indexed = try await TestServer.start { $0.indexesFile = file }
        try await Self.seed(indexed.client())
        #expect(try await Self.answers(indexed.client()) == expected)
        await indexed.stop()

        // A database written without the index gets it built when the server starts with the file.
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = try await TestServer.start(dataDirectory: dir)
        try await Self.seed(before.client())
        await before.stop()
        let after = try await TestServer.start(dataDirectory: dir) { $0.indexesFile = file }
        #expect(try await Self.answers(after.client()) == expected)
        // Writes after the build keep the index current.
        #expect(try await after.client().put("/v1/docs/posts/top", #"{"published": true, "views": 1000}"#).status == 200)
        #expect(try await Self.answers(after.client()).0.first == "top")
        await after.stop()
    }

    @Test func aBrokenIndexFileStopsTheServerFromStarting() async throws {
        let file = try Self.write(#"{"indexes": [{"collectionGroup": "posts", "fields": [{"fieldPath": "views", "order": "ASCENDING"}]}]}"#)
        let (status, output) = try await HearthCLI.run(["serve", "--port", "0", "--data", TestFolders.make(), "--indexes", file])
        #expect(status != 0)
        #expect(output.contains("index file \(file): indexes[0] has 1 field(s); a composite index needs at least 2"), "\(output)")
        let (missingStatus, missingOutput) = try await HearthCLI.run(["serve", "--port", "0", "--data", TestFolders.make(), "--indexes", "/nonexistent/indexes.json"])
        #expect(missingStatus != 0)
        #expect(missingOutput.contains("cannot read the index file /nonexistent/indexes.json"), "\(missingOutput)")
    }
}
