import Foundation
import HearthCore
import HearthSQLite
@testable import HearthStore
import HearthTesting
import Testing

/// Composite index definitions: parsing Firestore's index file, and building and dropping entries when the
/// store opens with a changed list.
@Suite struct CompositeIndexStoreTests {
    static let file = """
        {"indexes": [
          {"collectionGroup": "posts", "queryScope": "COLLECTION",
           "fields": [{"fieldPath": "published", "order": "ASCENDING"}, {"fieldPath": "views", "order": "DESCENDING"}]},
          {"collectionGroup": "posts", "queryScope": "COLLECTION_GROUP",
           "fields": [{"fieldPath": "tags", "arrayConfig": "CONTAINS"}, {"fieldPath": "views", "order": "ASCENDING"}]}
        ], "fieldOverrides": []}
        """

    @Test func parsesFirestoresIndexFile() throws {
        let indexes = try CompositeIndex.parseFile(JSON.parse(Array(Self.file.utf8)))
        #expect(indexes.count == 2)
        #expect(indexes[0].collectionGroup == "posts")
        #expect(indexes[0].fields.map(\.kind) == [.ascending, .descending])
        #expect(indexes[1].fields.map(\.kind) == [.contains, .ascending])
        #expect(indexes[0].entryField == "\u{2}published:a,views:d")
    }

    @Test(arguments: [
        ("[]", "must be a JSON object"),
        (#"{"indexs": []}"#, "unknown key 'indexs'"),
        (#"{"indexes": {}}"#, "\"indexes\" must be an array"),
        (#"{"indexes": [{"fields": []}]}"#, "indexes[0].collectionGroup"),
        (#"{"indexes": [{"collectionGroup": "a/b", "fields": []}]}"#, "indexes[0].collectionGroup"),
        (#"{"indexes": [{"collectionGroup": "p", "queryScope": "DATABASE", "fields": []}]}"#, "queryScope"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "a", "order": "ASCENDING"}]}]}"#, "at least 2"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "a", "order": "UP"}, {"fieldPath": "b", "order": "ASCENDING"}]}]}"#, "indexes[0].fields[0] needs exactly one"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "a", "order": "ASCENDING", "arrayConfig": "CONTAINS"}, {"fieldPath": "b", "order": "ASCENDING"}]}]}"#, "exactly one"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "a", "arrayConfig": "CONTAINS"}, {"fieldPath": "b", "arrayConfig": "CONTAINS"}]}]}"#, "more than one arrayConfig"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "a", "order": "ASCENDING"}, {"fieldPath": "a", "order": "DESCENDING"}]}]}"#, "appears twice"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "__name__", "order": "ASCENDING"}, {"fieldPath": "a", "order": "ASCENDING"}]}]}"#, "__name__"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "a..b", "order": "ASCENDING"}, {"fieldPath": "c", "order": "ASCENDING"}]}]}"#, "indexes[0].fields[0].fieldPath: field path 'a..b' has an empty segment"),
        (#"{"indexes": [{"collectionGroup": "p", "fields": [{"fieldPath": "a", "order": "ASCENDING", "mode": 1}, {"fieldPath": "c", "order": "ASCENDING"}]}]}"#, "unknown key 'mode'"),
    ])
    func badIndexFilesAreRefusedWithTheirPlace(text: String, message: String) throws {
        #expect {
            try CompositeIndex.parseFile(JSON.parse(Array(text.utf8)))
        } throws: { error in
            (error as? HearthError)?.code == .invalidArgument && (error as? HearthError)?.message.contains(message) == true
        }
    }

    /// Entries are built for documents stored before the index was defined, kept up to date by writes,
    /// and dropped with the definition; another collection id with the same fields keeps its own.
    @Test func openingTheStoreBuildsAndDropsEntries() async throws {
        let dir = TestFolders.path("hearth-composite")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var configuration = Store.Configuration(dataDirectory: dir)
        var store = try Store(configuration: configuration)
        func put(_ path: String, _ body: String, in store: Store) async throws {
            try await store.write { context in
                let t = context.nextCommitTime()
                try context.put(StoredDocument(path: try DocumentPath(path), data: Array(body.utf8), createTime: t, updateTime: t), commitTime: t)
            }
        }
        try await put("posts/a", #"{"published": true, "views": 3, "tags": ["x", "y", "x"]}"#, in: store)
        try await put("posts/b", #"{"published": false}"#, in: store)  // lacks `views`: no entry
        try await put("users/u/posts/c", #"{"published": true, "views": 9, "tags": []}"#, in: store)
        try await put("drafts/d", #"{"published": true, "views": 1}"#, in: store)
        store.close()

        let indexes = try CompositeIndex.parseFile(JSON.parse(Array(Self.file.utf8)))
        let drafts = CompositeIndex(collectionGroup: "drafts", fields: indexes[0].fields)
        configuration.compositeIndexes = indexes + [drafts]
        store = try Store(configuration: configuration)
        func rows(_ field: String) throws -> [String] {
            let raw = try SQLiteConnection(path: configuration.databasePath)
            let s = try raw.prepare("SELECT scope FROM field_index WHERE field = ? ORDER BY scope, key, doc")
            s.bind(1, field)
            var out: [String] = []
            while try s.step() { out.append(s.text(0)) }
            return out
        }
        // posts/a and users/u/posts/c (group scope, and the subcollection's own scope); drafts/d.
        #expect(try rows(indexes[0].entryField) == ["cusers/u/posts", "gdrafts", "gposts", "gposts"])
        // Two distinct tags of posts/a; c's empty array has none.
        #expect(try rows(indexes[1].entryField) == ["gposts", "gposts"])

        try await put("posts/b", #"{"published": false, "views": 5, "tags": ["z"]}"#, in: store)
        try await put("posts/a", #"{"published": true}"#, in: store)
        #expect(try rows(indexes[0].entryField) == ["cusers/u/posts", "gdrafts", "gposts", "gposts"])
        #expect(try rows(indexes[1].entryField) == ["gposts"])
        store.close()

        configuration.compositeIndexes = [drafts]
        store = try Store(configuration: configuration)
        store.close()
        #expect(try rows(indexes[0].entryField) == ["gdrafts"])
        #expect(try rows(indexes[1].entryField) == [])
    }

    /// Composite entries count toward the entries a document may need (Firestore's 40,000; 60 here), as in
    /// Firestore; a document stored before an index made it exceed them can still be rewritten and deleted.
    @Test func compositeEntriesCountTowardTheLimit() async throws {
        let dir = TestFolders.path("hearth-composite")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tags = (0..<40).map { "\"t\($0)\"" }.joined(separator: ",")
        func put(_ body: String, in store: Store) async throws {
            try await store.write { context in
                let t = context.nextCommitTime()
                try context.put(StoredDocument(path: try DocumentPath("posts/p"), data: Array(body.utf8), createTime: t, updateTime: t),
                                commitTime: t)
            }
        }
        var configuration = Store.Configuration(dataDirectory: dir)
        configuration.maxIndexEntriesPerDocument = 60
        var store = try Store(configuration: configuration)
        try await put(#"{"a": 1, "tags": [\#(tags)]}"#, in: store)  // 43 entries alone
        store.close()

        configuration.compositeIndexes = [CompositeIndex(collectionGroup: "posts", fields: [
            .init(try FieldPath(parsing: "tags"), .contains), .init(try FieldPath(parsing: "a"), .ascending)])]
        store = try Store(configuration: configuration)
        defer { store.close() }
        await #expect {
            try await put(#"{"a": 2, "tags": [\#(tags)]}"#, in: store)
        } throws: { error in
            (error as? HearthError)?.message == "the document needs 83 index entries with the composite indexes of 'posts'; the limit is 60"
        }
        try await put(#"{"a": 3}"#, in: store)
        try await store.write { context in _ = try context.delete(try DocumentPath("posts/p"), commitTime: context.nextCommitTime()) }
    }
}
