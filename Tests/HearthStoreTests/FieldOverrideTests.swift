import Foundation
import HearthCore
import HearthSQLite
@testable import HearthStore
import Testing
import HearthTesting

/// Single-field overrides (`fieldOverrides` of Firestore's index file): parsing, the entries writes keep,
/// rebuilding the entries when the overrides change, refusing queries that need exempted entries, and the
/// query differential run with overrides in force.
@Suite struct FieldOverrideTests {
    static let file = """
        {"indexes": [], "fieldOverrides": [
          {"collectionGroup": "posts", "fieldPath": "body", "ttl": false, "indexes": []},
          {"collectionGroup": "posts", "fieldPath": "tags", "indexes": [
            {"order": "ASCENDING", "queryScope": "COLLECTION"}, {"order": "DESCENDING", "queryScope": "COLLECTION"}]},
          {"collectionGroup": "posts", "fieldPath": "meta", "indexes": []},
          {"collectionGroup": "posts", "fieldPath": "meta.rank", "indexes": [
            {"order": "ASCENDING", "queryScope": "COLLECTION_GROUP"}, {"arrayConfig": "CONTAINS", "queryScope": "COLLECTION"}]},
          {"collectionGroup": "posts", "fieldPath": "labels", "indexes": [{"arrayConfig": "CONTAINS", "queryScope": "COLLECTION"}]}
        ]}
        """

    static func overrides() throws -> [FieldOverride] {
        try FieldOverride.parseFile(JSON.parse(Array(file.utf8)))
    }

    @Test func parsesFirestoresFieldOverrides() throws {
        let overrides = try Self.overrides()
        #expect(overrides.map(\.field.description) == ["body", "tags", "meta", "meta.rank", "labels"])
        #expect(overrides.map(\.indexing) == [
            FieldIndexing(values: false, contains: false), FieldIndexing(values: true, contains: false),
            FieldIndexing(values: false, contains: false), FieldIndexing(values: true, contains: true),
            FieldIndexing(values: false, contains: true),
        ])
        let posts = try #require(CompositeIndexes(overrides: overrides).overrides(of: "posts"))
        // Subfields inherit their nearest overridden parent's indexing unless overridden themselves.
        #expect(posts.indexing(of: try FieldPath(parsing: "meta.author.name")) == FieldIndexing(values: false, contains: false))
        #expect(posts.indexing(of: try FieldPath(parsing: "meta.rank")) == .automatic)
        #expect(posts.indexing(of: try FieldPath(parsing: "title")) == .automatic)
        #expect(CompositeIndexes(overrides: overrides).overrides(of: "users") == nil)
        #expect(try FieldOverride.parseFile(JSON.parse(#"{"indexes": []}"#)) == [])
    }

    @Test(arguments: [
        (#"{"fieldOverrides": {}}"#, "\"fieldOverrides\" must be an array"),
        (#"{"fieldOverrides": [3]}"#, "fieldOverrides[0] must be an object"),
        (#"{"fieldOverrides": [{"fieldPath": "a", "indexes": []}]}"#, "fieldOverrides[0].collectionGroup must be a collection id"),
        (#"{"fieldOverrides": [{"collectionGroup": "a/b", "fieldPath": "a", "indexes": []}]}"#, "fieldOverrides[0].collectionGroup"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "indexes": []}]}"#, "fieldOverrides[0].fieldPath must be a string"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a..b", "indexes": []}]}"#, "fieldOverrides[0].fieldPath: field path 'a..b' has an empty segment"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "__name__", "indexes": []}]}"#, "__name__ is always indexed"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a"}]}"#, "fieldOverrides[0].indexes must be an array"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": [], "ttl": true}]}"#, "TTL policies"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": [], "ttl": "no"}]}"#, "fieldOverrides[0].ttl must be true or false"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": [], "mode": 1}]}"#, "unknown key 'mode' in fieldOverrides[0]"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": ["ASCENDING"]}]}"#, "fieldOverrides[0].indexes[0] must be an object"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": [{"order": "UP"}]}]}"#, "fieldOverrides[0].indexes[0] needs exactly one"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": [{"order": "ASCENDING", "arrayConfig": "CONTAINS"}]}]}"#, "exactly one"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": [{"order": "ASCENDING", "queryScope": "DATABASE"}]}]}"#, "fieldOverrides[0].indexes[0].queryScope must be COLLECTION or COLLECTION_GROUP"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": [{"order": "ASCENDING", "density": 1}]}]}"#, "unknown key 'density' in fieldOverrides[0].indexes[0]"),
        (#"{"fieldOverrides": [{"collectionGroup": "p", "fieldPath": "a", "indexes": []}, {"collectionGroup": "p", "fieldPath": "`a`", "indexes": []}]}"#, "fieldOverrides[1]: 'a' of 'p' is overridden twice"),
    ])
    func badOverridesAreRefusedWithTheirPlace(text: String, message: String) throws {
        #expect {
            try FieldOverride.parseFile(JSON.parse(Array(text.utf8)))
        } throws: { error in
            (error as? HearthError)?.code == .invalidArgument && (error as? HearthError)?.message.contains(message) == true
        }
    }

    static func put(_ path: String, _ body: String, in store: Store) async throws {
        try await store.write { context in
            let t = context.nextCommitTime()
            try context.put(StoredDocument(path: try DocumentPath(path), data: Array(body.utf8), createTime: t, updateTime: t), commitTime: t)
        }
    }

    /// The `field` column of a document's rows in one scope, sorted.
    static func fields(of doc: String, scope: String, in configuration: Store.Configuration) throws -> [String] {
        let raw = try SQLiteConnection(path: configuration.databasePath)
        let s = try raw.prepare("SELECT field, doc FROM field_index WHERE scope = ?")
        s.bind(1, scope)
        let path = try DocumentPath(doc)
        let key = IndexEntry.scopes(of: path).first { $0.scope == scope }!.doc
        var out: [String] = []
        while try s.step() {
            if s.blob(1) == key { out.append(s.text(0).replacingOccurrences(of: IndexEntry.containsMarker, with: "contains:")) }
        }
        return out.sorted()
    }

    static let post = #"{"title": "t", "body": "long text", "tags": ["x", "y"], "labels": ["l"], "meta": {"author": {"name": "n"}, "rank": [1, 2]}}"#
    /// The rows of `post` with every field indexed, and with the overrides.
    /// (One row per distinct array element.)
    static let everyField = ["__name__", "body", "contains:labels", "contains:meta.rank", "contains:meta.rank", "contains:tags",
                             "contains:tags", "labels", "meta", "meta.author", "meta.author.name", "meta.rank", "tags", "title"]
    static let overridden = ["__name__", "contains:labels", "contains:meta.rank", "contains:meta.rank", "meta.rank", "tags", "title"]

    /// Writes keep only the entries the overrides leave (in the group's scope and a subcollection's own),
    /// another collection id keeps all of its own; reopening with other overrides rebuilds the single-field
    /// entries of the collection ids concerned and leaves composite entries alone.
    @Test func writesAndReopeningKeepTheEntriesTheOverridesLeave() async throws {
        let dir = TestFolders.path("hearth-overrides")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var configuration = Store.Configuration(dataDirectory: dir)
        let composite = CompositeIndex(collectionGroup: "posts", fields: [.init(try FieldPath(parsing: "body"), .ascending),
                                                                          .init(try FieldPath(parsing: "title"), .ascending)])
        configuration.compositeIndexes = [composite]
        configuration.fieldOverrides = try Self.overrides()
        var store = try Store(configuration: configuration)
        try await Self.put("posts/a", Self.post, in: store)
        try await Self.put("users/u/posts/b", Self.post, in: store)
        try await Self.put("drafts/c", Self.post, in: store)
        store.close()
        let withComposite = Self.overridden + [composite.entryField]
        #expect(try Self.fields(of: "posts/a", scope: "gposts", in: configuration) == withComposite.sorted())
        #expect(try Self.fields(of: "users/u/posts/b", scope: "gposts", in: configuration) == withComposite.sorted())
        #expect(try Self.fields(of: "users/u/posts/b", scope: "cusers/u/posts", in: configuration) == withComposite.sorted())
        #expect(try Self.fields(of: "drafts/c", scope: "gdrafts", in: configuration) == Self.everyField)

        // An update and a delete remove exactly the rows the write made.
        store = try Store(configuration: configuration)
        try await Self.put("posts/a", #"{"title": "u", "meta": {"rank": 3}}"#, in: store)
        #expect(try Self.fields(of: "posts/a", scope: "gposts", in: configuration) == ["__name__", "meta.rank", "title"])
        try await store.write { context in _ = try context.delete(try DocumentPath("users/u/posts/b"), commitTime: context.nextCommitTime()) }
        #expect(try Self.fields(of: "users/u/posts/b", scope: "cusers/u/posts", in: configuration) == [])
        try await Self.put("posts/a", Self.post, in: store)
        try await Self.put("users/u/posts/b", Self.post, in: store)
        store.close()

        // Without the overrides, every field of `posts` is indexed again; the composite entries stay.
        configuration.fieldOverrides = []
        store = try Store(configuration: configuration)
        store.close()
        #expect(try Self.fields(of: "posts/a", scope: "gposts", in: configuration) == (Self.everyField + [composite.entryField]).sorted())
        #expect(try Self.fields(of: "users/u/posts/b", scope: "cusers/u/posts", in: configuration) == (Self.everyField + [composite.entryField]).sorted())

        // And with them again, they are dropped again; `drafts` is not touched.
        configuration.fieldOverrides = try Self.overrides()
        store = try Store(configuration: configuration)
        store.close()
        #expect(try Self.fields(of: "posts/a", scope: "gposts", in: configuration) == withComposite.sorted())
        #expect(try Self.fields(of: "users/u/posts/b", scope: "cusers/u/posts", in: configuration) == withComposite.sorted())
        #expect(try Self.fields(of: "drafts/c", scope: "gdrafts", in: configuration) == Self.everyField)
    }

    /// A tool opening a served folder (`hearth fixtures load`, `hearth users`) reads the composite indexes and
    /// overrides the folder was served with, writes the entries the server would, and drops nothing.
    @Test func aToolOpeningAServedFolderUsesItsIndexDefinitions() async throws {
        let dir = TestFolders.path("hearth-overrides")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var served = Store.Configuration(dataDirectory: dir)
        let composites = [
            CompositeIndex(collectionGroup: "posts", fields: [.init(try FieldPath(parsing: "title"), .ascending),
                                                              .init(try FieldPath(parsing: "`a,b:c`.`d\\`e`"), .descending)]),
            CompositeIndex(collectionGroup: "drafts", fields: [.init(try FieldPath(parsing: "tags"), .contains),
                                                               .init(try FieldPath(parsing: "title"), .ascending)]),
        ]
        served.compositeIndexes = composites
        served.fieldOverrides = try Self.overrides()
        var store = try Store(configuration: served)
        try await Self.put("posts/a", Self.post, in: store)
        store.close()

        var tool = Store.Configuration(dataDirectory: dir)
        tool.usesServedIndexDefinitions = true
        store = try Store(configuration: tool)
        #expect(Set(store.composites.all) == Set(composites))
        #expect(Set(store.composites.overrides) == Set(served.fieldOverrides))
        try await Self.put("users/u/posts/b", Self.post, in: store)
        store.close()
        #expect(try Self.fields(of: "users/u/posts/b", scope: "cusers/u/posts", in: served) == Self.overridden.sorted())
        #expect(try Self.fields(of: "posts/a", scope: "gposts", in: served) == Self.overridden.sorted())
        // (`post` has no `a,b:c` map: no composite entry; one with it gets one.)
        store = try Store(configuration: tool)
        try await Self.put("posts/c", #"{"title": "t", "a,b:c": {"d`e": 1}}"#, in: store)
        store.close()
        let c = ["__name__", "title", "`a,b:c`", composites[0].fields[1].field.description, composites[0].entryField].sorted()
        #expect(try Self.fields(of: "posts/c", scope: "gposts", in: served) == c)

        // The server opening again with the same file finds nothing to rebuild.
        store = try Store(configuration: served)
        store.close()
        #expect(try Self.fields(of: "posts/c", scope: "gposts", in: served) == c)
        #expect(try Self.fields(of: "users/u/posts/b", scope: "gposts", in: served) == Self.overridden.sorted())
    }

    /// A query that needs entries an override removed is refused, naming the field, unless a composite index
    /// serves it; queries on the fields that keep their entries answer as before.
    @Test func queriesNeedingExemptedEntriesAreRefused() async throws {
        let dir = TestFolders.path("hearth-overrides")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var configuration = Store.Configuration(dataDirectory: dir)
        configuration.fieldOverrides = try Self.overrides()
        configuration.compositeIndexes = [CompositeIndex(collectionGroup: "posts", fields: [
            .init(try FieldPath(parsing: "title"), .ascending), .init(try FieldPath(parsing: "body"), .descending)])]
        let store = try Store(configuration: configuration)
        defer { store.close() }
        try await Self.put("posts/a", Self.post, in: store)
        try await Self.put("posts/b", #"{"title": "t", "body": "other", "tags": ["x"], "labels": ["m"], "meta": {"rank": 5}}"#, in: store)

        func run(_ json: String) async throws -> Result<[String], HearthError> {
            let query = try Query(json: JSON.parse(Array(json.utf8)))
            do {
                return .success(try await store.read { try $0.runQuery(query).map(\.path.id) })
            } catch let error as HearthError {
                return .failure(error)
            }
        }
        for (query, field, kind) in [
            (#"{"from": "posts", "where": [["body", "==", "other"]]}"#, "body", "values"),
            (#"{"from": "posts", "orderBy": [{"field": "body"}]}"#, "body", "values"),
            (#"{"from": "posts", "where": [["tags", "==", ["x"]], ["body", ">", "a"]]}"#, "body", "values"),
            (#"{"from": "posts", "where": {"or": [["title", "==", "z"], ["body", "==", "other"]]}}"#, "body", "values"),
            (#"{"from": "posts", "where": [["tags", "array-contains", "x"]]}"#, "tags", "array elements"),
            (#"{"from": "posts", "where": [["tags", "array-contains-any", ["x"]]]}"#, "tags", "array elements"),
            (#"{"from": "posts", "where": [["labels", "==", ["l"]]]}"#, "labels", "values"),
            (#"{"from": "posts", "where": [["meta.author.name", "==", "n"]]}"#, "meta.author.name", "values"),
            (#"{"from": {"collectionGroup": "posts"}, "where": [["meta", "!=", null]]}"#, "meta", "values"),
        ] {
            let result = try await run(query)
            guard case .failure(let error) = result else {
                Issue.record("\(query) answered \(result)")
                continue
            }
            #expect(error.code == .failedPrecondition)
            #expect(error.message == "the query needs the index of '\(field)' (its \(kind)) in 'posts', which a field override of the index file exempts; restore that index in the override, or add a composite index that serves the query", "\(query)")
        }
        for (query, ids) in [
            (#"{"from": "posts", "where": [["title", "==", "t"]]}"#, ["a", "b"]),
            (#"{"from": "posts", "where": [["tags", "==", ["x"]]]}"#, ["b"]),
            (#"{"from": "posts", "orderBy": [{"field": "tags", "direction": "desc"}]}"#, ["a", "b"]),
            (#"{"from": "posts", "where": [["labels", "array-contains", "m"]]}"#, ["b"]),
            (#"{"from": "posts", "where": [["meta.rank", "array-contains", 2]]}"#, ["a"]),
            (#"{"from": "posts", "orderBy": [{"field": "meta.rank", "direction": "desc"}]}"#, ["a", "b"]),
            // The composite index serves an ordering by `body` after an equality on `title`.
            (#"{"from": "posts", "where": [["title", "==", "t"]], "orderBy": [{"field": "body", "direction": "desc"}]}"#, ["b", "a"]),
            (#"{"from": "posts", "where": [["title", "==", "t"], ["body", ">", "a"]]}"#, ["a", "b"]),
            // There, an exempted field's filter is checked on the documents, not looked up in entries it lacks.
            (#"{"from": "posts", "where": [["title", "==", "t"], ["tags", "array-contains", "y"]], "orderBy": [{"field": "body"}]}"#, ["a"]),
            // A collection id without overrides is not affected.
            (#"{"from": "drafts", "where": [["body", "==", "x"]]}"#, []),
        ] {
            #expect(try await run(query) == .success(ids), "\(query)")
        }
    }

    /// The query differential with overrides in force over the data written before them: every query either
    /// answers as the reference evaluator does, or is refused and does need an exempted field's entries.
    @Test(arguments: QueryDifferentialTests.seeds.prefix(3))
    func answersEqualTheReferenceOrAreRefusedForAReason(seed: UInt64) async throws {
        try await HeavyWork.run { try await checkAnswersEqualTheReferenceOrAreRefusedForAReason(seed: seed) }
    }

    private func checkAnswersEqualTheReferenceOrAreRefusedForAReason(seed: UInt64) async throws {
        let differential = QueryDifferentialTests()
        try await differential.withReopenedDataset(seed: seed, reading: {
            $0.compositeIndexes = CompositeIndexDifferentialTests.indexes
            $0.fieldOverrides = try FieldOverride.parseFile(JSON.parse(#"""
                {"fieldOverrides": [
                  {"collectionGroup": "users", "fieldPath": "c", "indexes": []},
                  {"collectionGroup": "users", "fieldPath": "tags", "indexes": [{"order": "ASCENDING"}]},
                  {"collectionGroup": "users", "fieldPath": "m", "indexes": []},
                  {"collectionGroup": "users", "fieldPath": "m.x", "indexes": [{"order": "DESCENDING"}, {"arrayConfig": "CONTAINS"}]}
                ]}
                """#))
        }) { store, docs, r in
            func needsExempted(_ q: Query) -> Bool {
                let ordered = q.normalizedOrder.contains { $0.field == FieldPath(uncheckedSegments: ["c"]) }
                return ordered || (q.filter?.fieldFilters ?? []).contains { f in
                    f.field == FieldPath(uncheckedSegments: ["c"])
                        || (f.field == FieldPath(uncheckedSegments: ["tags"]) && (f.op == .arrayContains || f.op == .arrayContainsAny))
                }
            }

            var refused = 0, answered = 0
            for round in 0..<400 {
                var q = round % 2 == 0 ? r.query(over: QueryDifferentialTests.collections[0]) : CompositeIndexDifferentialTests.shaped(&r)
                differential.mutate(&q, docs: docs, &r)
                if r.chance(0.3) {
                    // An equality or array-contains on an exempted field, which a composite index's scan must check
                    // on the documents rather than look up.
                    let extra = r.chance(0.5) ? FieldFilter(field: FieldPath(uncheckedSegments: ["c"]), op: .equal, value: r.smallValue())
                        : FieldFilter(field: FieldPath(uncheckedSegments: ["tags"]), op: .arrayContains, value: r.smallValue())
                    q.filter = q.filter.map { .and([$0, .field(extra)]) } ?? .field(extra)
                }
                guard (try? q.validate()) != nil else { continue }
                do {
                    _ = try await store.read { [q] in try $0.runQuery(QueryDifferentialTests.resolvingCursors(q, in: docs)) }
                } catch let error as HearthError where error.code == .failedPrecondition {
                    #expect(needsExempted(q), "seed \(seed) query \(round) was refused: \(q.jsonText)")
                    refused += 1
                    continue
                } catch {
                    // Other errors (a cursor document without the ordered field) must be the reference's too.
                }
                if let failure = try await differential.compare(q, docs: docs, store: store) {
                    Issue.record("seed \(seed) query \(round): \(failure)\nquery: \(q.jsonText)")
                    return
                }
                answered += 1
            }
            #expect(refused > 40 && answered > 150, "refused \(refused), answered \(answered)")
        }
    }
}
