import HearthCore
import HearthStore
import Testing

/// Listing a collection (`ReadContext.documents(in:after:limit:)`), served by the field index's name
/// entries: every document of that collection and no other, in id order (UTF-8 bytes), page by page.
@Suite struct ListingTests {
    /// The ids of one page of a listing.
    static func ids(_ store: Store, _ collection: CollectionPath, after: String?, limit: Int) async throws -> [String] {
        try await store.read { try $0.documents(in: collection, after: after, limit: limit).map(\.path.id) }
    }

    @Test func listingsHoldExactlyTheCollectionsDocumentsInIDOrder() async throws {
        try await withTemporaryStore { store in
            let ids = ["a", "a b", "a-b", "a.b", "a0", "Z", "é", "ü-2", "zz", "0", "~"]
            for id in ids { try await put("items/\(id)", #"{"id": "\#(id)"}"#, in: store) }
            try await put("items/empty", "{}", in: store)
            // Documents that share the collection id or sit under the collection's documents.
            try await put("owners/o/items/x", #"{"id": "nested"}"#, in: store)
            try await put("items/a/items/y", #"{"id": "under a"}"#, in: store)
            try await put("itemsx/q", #"{"id": "other"}"#, in: store)
            let expected = (ids + ["empty"]).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }

            let root = try CollectionPath("items")
            #expect(try await Self.ids(store, root, after: nil, limit: 100) == expected)
            // Page by page, three at a time, each page starting after the last id of the one before.
            var paged: [String] = []
            var after: String?
            while true {
                let page = try await Self.ids(store, root, after: after, limit: 3)
                paged += page
                guard page.count == 3 else { break }
                after = page.last
            }
            #expect(paged == expected)
            // After an id that is no longer there (deleted between two pages), or never was.
            try await store.write { context in _ = try context.delete(DocumentPath("items/a0"), commitTime: context.nextCommitTime()) }
            let afterA0 = expected.drop { $0 != "a0" }.dropFirst().prefix(2)
            #expect(try await Self.ids(store, root, after: "a0", limit: 2) == Array(afterA0))
            let afterSlash = expected.first { $0 != "a0" && Array("a/".utf8).lexicographicallyPrecedes(Array($0.utf8)) }
            #expect(try await Self.ids(store, root, after: "a/", limit: 1) == [afterSlash!])
            // Nested collections list their own documents only.
            #expect(try await Self.ids(store, CollectionPath("owners/o/items"), after: nil, limit: 10) == ["x"])
            #expect(try await Self.ids(store, CollectionPath("items/a/items"), after: nil, limit: 10) == ["y"])
            #expect(try await Self.ids(store, CollectionPath("none"), after: nil, limit: 10).isEmpty)
        }
    }
}
