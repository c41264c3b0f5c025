import HearthCore
import HearthStore
import Testing

/// `Store.boundedRead`: a read that needs more of SQLite's work than its bound stops with
/// `ReadBudgetExceeded` and never returns a value; one within it answers as an unbounded read does, and the
/// pooled connection it used is left as it was found.
@Suite struct BoundedReadTests {
    static func query(_ json: String) throws -> Query {
        try Query(json: JSON.parse(Array(json.utf8)))
    }

    @Test func readsStopPastTheirBoundAndAnswerWithinIt() async throws {
        try await withTemporaryStore { store in
            var writes: [String] = []
            for i in 0..<200 {
                try await put("posts/p\(i)", #"{"n": \#(i), "even": \#(i % 2 == 0), "title": "post \#(i)"}"#, in: store)
                writes.append("posts/p\(i)")
            }
            let short = try Self.query(#"{"from": "posts", "where": [["even", "==", true]], "orderBy": [{"field": "n", "direction": "desc"}], "limit": 5}"#)
            let long = try Self.query(#"{"from": "posts", "where": [["title", ">=", "post"]], "orderBy": [{"field": "title"}]}"#)
            let expectedShort = try await store.read { try $0.runQuery(short).map(\.path.id) }
            #expect(expectedShort == ["p198", "p196", "p194", "p192", "p190"])
            #expect(try store.boundedRead(instructions: 20_000) { try $0.runQuery(short).map(\.path.id) } == expectedShort)
            for budget in [100, 1_000, 3_000] {
                #expect(throws: ReadBudgetExceeded.self, "budget \(budget)") {
                    _ = try store.boundedRead(instructions: budget) { try $0.runQuery(long) }
                }
            }
            // Swallowed failures inside the read do not make a value: past the bound it throws all the same.
            #expect(throws: ReadBudgetExceeded.self) {
                _ = try store.boundedRead(instructions: 1_000) { (try? $0.runQuery(long))?.count ?? -1 }
            }
            // Every pooled connection is out of its interrupted read: later reads see later writes.
            try await put("posts/late", #"{"n": 1000, "even": true, "title": "post late"}"#, in: store)
            for _ in 0..<8 {
                #expect(try store.boundedRead(instructions: 20_000) { try $0.runQuery(short).first?.path.id } == "late")
                #expect(try store.pointRead { try $0.document(at: DocumentPath("posts/late")) } != nil)
            }
        }
    }
}
