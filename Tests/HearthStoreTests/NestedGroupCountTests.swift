import Foundation
import HearthCore
import HearthSQLite
@testable import HearthStore
import HearthTesting
import Testing

/// A root collection's counts come from its group's scope in the field index. Until a nested collection
/// with the same id holds a document, every row there is the root collection's and is counted as it is;
/// from then on the count keeps only the root collection's own rows.
@Suite struct NestedGroupCountTests {
    func count(_ query: String, upTo: Int? = nil, in store: Store) async throws -> Value? {
        let aggregate = AggregateQuery(query: try Query(jsonText: query), aggregations: [.init("n", .count(upTo: upTo))])
        return try await store.read { try $0.runAggregate(aggregate).result["n"] }
    }

    @Test func rootCountsStayExactWhenANestedCollectionSharesTheID() async throws {
        try await withTemporaryStore { store in
            for i in 0..<5 { try await put("items/i\(i)", #"{"cat": "a", "n": \#(i)}"#, in: store) }
            try await put("items/j", #"{"cat": "b"}"#, in: store)
            let byCat = #"{"from": "items", "where": [["cat", "==", "a"]]}"#
            let all = #"{"from": "items"}"#
            #expect(try await store.read { try $0.hasNestedCollections("items") } == false)
            #expect(try await count(byCat, in: store) == .int(5))
            #expect(try await count(byCat, upTo: 3, in: store) == .int(3))
            #expect(try await count(all, in: store) == .int(6))

            // Nested collections named `items`, one under a root `items` document (its path sorts among the
            // root collection's), one elsewhere.
            try await put("items/i0/items/x", #"{"cat": "a"}"#, in: store)
            try await put("owners/o/items/y", #"{"cat": "a"}"#, in: store)
            #expect(try await store.read { try $0.hasNestedCollections("items") })
            #expect(try await count(byCat, in: store) == .int(5))
            #expect(try await count(byCat, upTo: 5, in: store) == .int(5))
            #expect(try await count(all, in: store) == .int(6))
            #expect(try await count(#"{"from": {"collectionGroup": "items"}, "where": [["cat", "==", "a"]]}"#, in: store) == .int(7))
        }
    }

    /// A write that fails rolls back its mark with the document, and the count stays exact either way.
    @Test func aRolledBackNestedWriteLeavesNoMark() async throws {
        try await withTemporaryStore { store in
            try await put("items/a", #"{"cat": "a"}"#, in: store)
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await store.write { context in
                    let t = context.nextCommitTime()
                    try context.put(StoredDocument(path: try DocumentPath("items/a/items/b"), data: Array(#"{"cat": "a"}"#.utf8),
                                                   createTime: t, updateTime: t), commitTime: t)
                    throw Refused()
                }
            }
            #expect(try await store.read { try $0.hasNestedCollections("items") } == false)
            #expect(try await count(#"{"from": "items", "where": [["cat", "==", "a"]]}"#, in: store) == .int(1))
        }
    }

    /// Upgrading a database from before the marks records the nested collection ids it already holds.
    @Test func theUpgradeMarksNestedCollectionsAlreadyStored() async throws {
        let dir = TestFolders.path("hearth-nested")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Store.Configuration(dataDirectory: dir)
        try makeDatabaseBeforeTheFieldIndex(at: configuration.databasePath, documents: [
            ("items/a", #"{"cat": "a"}"#), ("owners/o/items/b", #"{"cat": "a"}"#), ("owners/o/notes/c", #"{"cat": "a"}"#),
        ])
        let raw = try SQLiteConnection(path: configuration.databasePath)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        #expect(try raw.scalarInt("PRAGMA user_version") == Int64(Schema.migrations.count))
        #expect(try await store.read { try $0.hasNestedCollections("items") })
        #expect(try await store.read { try $0.hasNestedCollections("notes") })
        #expect(try await store.read { try $0.hasNestedCollections("owners") } == false)
        #expect(try await count(#"{"from": "items", "where": [["cat", "==", "a"]]}"#, in: store) == .int(1))
    }
}
