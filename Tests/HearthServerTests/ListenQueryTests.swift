import Foundation
import HearthCore
import HearthTesting
import Testing
import HearthEngine
import HearthStore
import HearthServer
import HearthEngine

/// A listener's first result comes from the field index, as `POST /v1/query` does, and resuming a query
/// with a limit finds the documents that newer ones pushed out of its window since the token.
@Suite struct ListenQueryTests {
    /// 2,000 items; every 100th is red.
    static func loadItems(_ client: HearthClient) async throws {
        for batch in 0..<4 {
            try await client.load((0..<500).map { k in
                let n = batch * 500 + k
                return ("items/i\(n)", #"{"n": \#(n), "color": "\#(n % 100 == 0 ? "red" : "blue")", "tags": ["t\#(n % 7)"]}"#)
            })
        }
    }

    @Test func firstSnapshotsComeFromTheIndex() async throws {
        try await TestServer.with { server, client in
            try await Self.loadItems(client)
            let storage = server.services.database.storage
            let queries = [
                // Equality: the index yields exactly the 20 red items.
                (#"{"from": "items", "where": [["color", "==", "red"]]}"#, 20),
                // A range with a limit, newest first: an ordered scan that stops after 5 rows.
                (#"{"from": "items", "where": [["n", ">=", 1000]], "orderBy": [["n", "desc"]], "limit": 5}"#, 5),
                // Equality plus order, from the back, with an offset and a projection.
                (#"{"from": "items", "where": [["color", "==", "red"]], "orderBy": [["n", "asc"]], "limitToLast": 3, "offset": 2, "select": ["n"]}"#, 3),
                // Cursors over the ordered field.
                (#"{"from": "items", "orderBy": [["n", "asc"]], "startAfter": [1500], "endAt": [1510]}"#, 10),
                (#"{"from": {"collectionGroup": "items"}, "where": [["tags", "array-contains", "t3"], ["color", "==", "red"]]}"#, 3),
            ]
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            for (k, (query, count)) in queries.enumerated() {
                let before = storage.documentsScanned
                try await ws.listen("q\(k)", query: query)
                let snapshot = try await ws.expect("snapshot", id: "q\(k)")
                let scanned = storage.documentsScanned - before
                #expect(snapshot["initial"] == .bool(true))
                let expected = try await client.query(query)
                #expect(expected.status == 200)
                #expect(ws.views["q\(k)"]?.map(\.path.description) == expected.documentPaths, "\(query)")
                #expect(ws.views["q\(k)"]?.count == count, "\(query)")
                // Each is read through the index: far fewer documents than the collection's 2,000.
                #expect(scanned <= 3 * count + 10, "\(query) read \(scanned) documents for \(count) results")
            }
            // The projection applies to what is delivered.
            #expect(ws.views["q2"]?.map(\.fields) == [["n": .int(1500)], ["n": .int(1600)], ["n": .int(1700)]])
            // The running total is a metric too.
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains("hearth_documents_scanned_total \(storage.documentsScanned)"), "\(metrics.prefix(2000))")
            await ws.close()
        }
    }

    /// Newer documents sorting first push unchanged ones out of a limit window; the result at the token
    /// still had them, and the resumed snapshot removes them from the client's view.
    @Test func resumingALimitedQueryFindsDocumentsPushedOutOfItsWindow() async throws {
        try await TestServer.with { server, client in
            try await client.load(["a", "b", "c", "d", "e", "f"].enumerated().map { ("items/\($1)", #"{"n": \#(($0 + 1) * 10)}"#) })
            let queries = [
                "first": #"{"from": "items", "orderBy": [["n", "asc"]], "limit": 3}"#,
                "offset": #"{"from": "items", "orderBy": [["n", "asc"]], "offset": 1, "limit": 2}"#,
                "last": #"{"from": "items", "orderBy": [["n", "desc"]], "limitToLast": 3}"#,
                "lastOffset": #"{"from": "items", "orderBy": [["n", "asc"]], "limitToLast": 2, "offset": 1}"#,
            ]
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            var saved: [String: (view: [Document], token: String)] = [:]
            for (id, query) in queries {
                try await ws.listen(id, query: query)
                try await ws.expect("snapshot", id: id)
                saved[id] = (try #require(ws.views[id]), try #require(ws.positions[id]?.resumeToken))
            }
            #expect(saved["first"]?.view.map(\.path.id) == ["a", "b", "c"])
            #expect(saved["offset"]?.view.map(\.path.id) == ["b", "c"])
            #expect(saved["last"]?.view.map(\.path.id) == ["c", "b", "a"])
            #expect(saved["lastOffset"]?.view.map(\.path.id) == ["d", "e"])
            await ws.close()

            // Two new documents sort first, one sorts last, and one member of each window changes.
            try await client.load([("items/x", #"{"n": 1}"#), ("items/y", #"{"n": 2}"#), ("items/z", #"{"n": 99}"#)])
            _ = try await client.patch("/v1/docs/items/a", #"{"n": 11}"#)
            _ = try await client.patch("/v1/docs/items/e", #"{"n": 51}"#)
            _ = try await client.delete("/v1/docs/items/f")

            let again = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            for (id, query) in queries {
                again.restore(id, view: saved[id]!.view)
                try await again.listen(id, query: query, resumeToken: saved[id]!.token)
                let snapshot = try await again.expect("snapshot", id: id)
                #expect(snapshot["reset"] == nil, "\(id) resumed without a reset")
                let expected = try await client.query(query)
                #expect(again.views[id]?.map(\.path.description) == expected.documentPaths, "\(id): \(query)")
            }
            #expect(again.views["first"]?.map(\.path.id) == ["x", "y", "a"])
            #expect(again.views["first"]?.last?.fields["n"] == .int(11))
            #expect(again.views["offset"]?.map(\.path.id) == ["y", "a"])
            #expect(again.views["last"]?.map(\.path.id) == ["a", "y", "x"])
            #expect(again.views["lastOffset"]?.map(\.path.id) == ["d", "e"])
            await again.close()
        }
    }
}
