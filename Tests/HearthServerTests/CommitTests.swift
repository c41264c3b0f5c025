import HearthCore
import HearthTesting
import Testing
import HTTPTypes

/// Atomic commits, preconditions and optimistic transactions over HTTP.
@Suite struct CommitTests {
    @Test func orderedAtomicCommit() async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/acct/a", #"{"balance": 10}"#)
            let ok = try await client.post("/v1/commit", """
                {"writes": [
                  {"update": "acct/a", "data": {"balance": {"$increment": -5}}},
                  {"set": "acct/b", "data": {"balance": 5, "at": {"$serverTimestamp": true}}},
                  {"create": "acct/c", "data": {}},
                  {"delete": "acct/c"},
                  {"verify": "acct/a", "precondition": {"exists": true}}
                ]}
                """)
            #expect(ok.status == 200)
            guard case .array(let results)? = ok.json?["writeResults"] else { Issue.record("no results"); return }
            #expect(results.count == 5)
            let commitTime = try #require(ok.json?["commitTime"]?.stringValue)
            #expect(results[0]["updateTime"] == .string(commitTime))
            #expect(results[0]["transformResults"] == .array([.int(5)]))
            #expect(results[3]["updateTime"] == nil)
            let b = try await client.get("/v1/docs/acct/b")
            #expect(b.json?["data"]?["at"]?["$timestamp"] == .string(commitTime))
            #expect(try await client.get("/v1/docs/acct/c").status == 404)

            // A failing write rolls back the whole commit.
            let failed = try await client.post("/v1/commit", """
                {"writes": [
                  {"update": "acct/a", "data": {"balance": 0}},
                  {"create": "acct/b", "data": {"dup": true}}
                ]}
                """)
            #expect(failed.status == 409)
            #expect(failed.errorCode == "already-exists")
            #expect(failed.errorMessage?.contains("acct/b") == true)
            #expect(try await client.get("/v1/docs/acct/a").json?["data"]?["balance"] == .int(5))

            let precondition = try await client.post("/v1/commit", """
                {"writes": [{"set": "acct/a", "data": {"balance": 1}, "precondition": {"updateTime": "2001-01-01T00:00:00Z"}}]}
                """)
            #expect(precondition.status == 412)
            let notExists = try await client.post("/v1/commit", """
                {"writes": [{"delete": "acct/a", "precondition": {"exists": false}}]}
                """)
            #expect(notExists.status == 409)
            #expect(try await client.get("/v1/docs/acct/a").status == 200)
        }
    }

    @Test func badCommitsChangeNothing() async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/k/1", #"{"v": 1}"#)
            let cases = [
                #"{"writes": [{"set": "k/1", "data": {"v": 2}}, {"sett": "k/2", "data": {}}]}"#,
                #"{"writes": [{"set": "k", "data": {}}]}"#,
                #"{"writes": [{"set": "k/1", "data": {"v": 2}}, {"delete": "k/1", "data": {}}]}"#,
                #"{"writes": [{"set": "k/1", "data": {"v": 2}}, {"verify": "k/1"}]}"#,
                #"{"writes": [{"update": "k/1", "data": {"v": 2}, "merge": true}]}"#,
                #"{"writes": {}}"#,
                #"{"writes": [], "extra": 1}"#,
                #"{"writes": [{"set": "k/1", "data": {"v": {"$delete": true}}}]}"#,
                #"{"writes": [{"set": "k/1", "data": {"v": [{"$serverTimestamp": true}]}}]}"#,
                #"{"writes": [{"set": "k/1", "data": {"v": {"$increment": "1"}}}]}"#,
                #"{"writes": [{"set": "k/1", "precondition": {"exists": "yes"}, "data": {}}]}"#,
            ]
            for body in cases {
                let r = try await client.post("/v1/commit", body)
                #expect(r.status == 400, "\(body) → \(r.status) \(r.text)")
                #expect(r.errorCode == "invalid-argument")
            }
            #expect(try await client.get("/v1/docs/k/1").json?["data"] == (try JSON.parse(#"{"v": 1}"#)))
            #expect(try await client.get("/v1/docs/k/2").status == 404)
        }
    }

    /// An error found while a commit of several writes runs names the write, as its validation errors do.
    @Test func commitErrorsNameTheWrite() async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/accounts/b", #"{"v": 1}"#)
            let rows: [(String, Int, String)] = [
                (#"{"create": "accounts/b", "data": {}}"#, 409, "writes[1]: document accounts/b already exists"),
                (#"{"update": "accounts/missing", "data": {"v": 2}}"#, 404, "writes[1]: no document to update at accounts/missing"),
                (#"{"delete": "accounts/missing", "precondition": {"exists": true}}"#, 404, "writes[1]: "),
                (#"{"verify": "accounts/b", "precondition": {"updateTime": "2020-01-01T00:00:00Z"}}"#, 412, "writes[1]: document accounts/b was updated"),
            ]
            for (write, status, message) in rows {
                let r = try await client.post("/v1/commit", #"{"writes": [{"set": "accounts/a", "data": {"v": 1}}, \#(write)]}"#)
                #expect(r.status == status, "\(write): \(r.status) \(r.text)")
                #expect(r.errorMessage?.hasPrefix(message) == true, "\(write): \(r.text)")
            }
            #expect(try await client.get("/v1/docs/accounts/a").status == 404)
        }
    }

    /// Many writes to one large document would make the writer redo the whole document each time: a commit
    /// whose writes leave more than `maxCommitWrittenBytes` of documents is refused, whoever sends it, and
    /// writes nothing. Array transforms cost what their arrays hold, not the product of their lengths.
    @Test func manyWritesToOneLargeDocumentAreBounded() async throws {
        try await TestServer.with { _, client in
            let union = (0..<500).map { k in
                #"{"set": "heavy/same", "merge": true, "data": {"a": {"$arrayUnion": [\#((0..<70).map { String(k * 70 + $0) }.joined(separator: ","))]}}}"#
            }
            let big = String(repeating: "x", count: 1_000_000)
            _ = try await client.put("/v1/docs/heavy/big", #"{"s": "\#(big)"}"#)
            let merges = (0..<200).map { #"{"set": "heavy/big", "merge": true, "data": {"k\#($0)": \#($0)}}"# }
            for writes in [union, merges] {
                let r = try await client.post("/v1/commit", #"{"writes": [\#(writes.joined(separator: ","))]}"#)
                #expect(r.status == 400 && r.errorCode == "invalid-argument", "\(r.status) \(r.text.prefix(300))")
                #expect(r.errorMessage?.contains("bytes of documents") == true, "\(r.text.prefix(300))")
            }
            #expect(try await client.get("/v1/docs/heavy/same").status == 404)
            #expect(try await client.get("/v1/docs/heavy/big").json?["data"]?["k0"] == nil)
            // Within the bound, the same writes go through, each transform applied in order.
            let few = try await client.post("/v1/commit", #"{"writes": [\#(union.prefix(50).joined(separator: ","))]}"#)
            #expect(few.status == 200, "\(few.text.prefix(300))")
            #expect(try await client.get("/v1/docs/heavy/same").json?["data"]?["a"]?.arrayCount == 3_500)
        }
    }

    @Test func transactionCommitsWhenNothingChanged() async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/rounds/r1", #"{"votes": 1}"#)
            let begin = try await client.request(.post, "/v1/transactions")
            #expect(begin.status == 201)
            let tx = try #require(begin.json?["transaction"]?.stringValue)
            let read = try await client.get("/v1/docs/rounds/r1?transaction=\(tx)")
            #expect(read.status == 200)
            let missing = try await client.get("/v1/docs/rounds/r2?transaction=\(tx)")
            #expect(missing.status == 404)
            let commit = try await client.post("/v1/commit", """
                {"transaction": "\(tx)", "writes": [{"set": "rounds/r1", "data": {"votes": 2}}, {"set": "rounds/r2", "data": {"votes": 0}}]}
                """)
            #expect(commit.status == 200)
            // A finished transaction cannot be used again.
            let reuse = try await client.post("/v1/commit", #"{"transaction": "\#(tx)", "writes": []}"#)
            #expect(reuse.status == 400)
        }
    }

    @Test func racingTransactionsExactlyOneAborts() async throws {
        let server = try await TestServer.start()
        let a = server.client(), b = server.client()
        _ = try await a.put("/v1/docs/counters/c", #"{"n": 0}"#)
        let txA = try #require(try await a.request(.post, "/v1/transactions").json?["transaction"]?.stringValue)
        let txB = try #require(try await b.request(.post, "/v1/transactions").json?["transaction"]?.stringValue)
        let readA = try await a.get("/v1/docs/counters/c?transaction=\(txA)")
        let readB = try await b.get("/v1/docs/counters/c?transaction=\(txB)")
        #expect(readA.json?["data"]?["n"] == .int(0))
        #expect(readB.json?["data"]?["n"] == .int(0))
        async let commitA = a.post("/v1/commit", #"{"transaction": "\#(txA)", "writes": [{"set": "counters/c", "data": {"n": 1, "by": "a"}}]}"#)
        async let commitB = b.post("/v1/commit", #"{"transaction": "\#(txB)", "writes": [{"set": "counters/c", "data": {"n": 1, "by": "b"}}]}"#)
        let results = try await [commitA, commitB]
        let statuses = results.map(\.status).sorted()
        #expect(statuses == [200, 409])
        let loser = try #require(results.first { $0.status == 409 })
        #expect(loser.errorCode == "aborted")
        let winner = try #require(results.first { $0.status == 200 })
        let final = try await a.get("/v1/docs/counters/c")
        #expect(final.json?["data"]?["by"] == (winner === results[0] ? .string("a") : .string("b")))
        await a.close(); await b.close()
        await server.stop()
    }

    @Test func rollbackAndUnknownTransactions() async throws {
        try await TestServer.with { _, client in
            let tx = try #require(try await client.request(.post, "/v1/transactions").json?["transaction"]?.stringValue)
            #expect(try await client.request(.post, "/v1/transactions/\(tx)/rollback").status == 204)
            #expect(try await client.request(.post, "/v1/transactions/\(tx)/rollback").status == 400)
            #expect(try await client.get("/v1/docs/x/1?transaction=nope").status == 400)
            #expect(try await client.post("/v1/transactions", #"{"readOnly": 1}"#).status == 400)
        }
    }
}

extension HTTPResult {
    static func === (a: HTTPResult, b: HTTPResult) -> Bool { a.body == b.body && a.status == b.status }
}
