import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// `DocumentImport` encodes and indexes each batch before the writer takes it (`DocumentStorage.prepare`);
/// what it stores must be exactly what a commit of the same sets stores, including where the prepared forms
/// do not apply (a sentinel, the same document twice in a batch, a document stored before with other fields).
@Suite struct ImportStoresAsCommitTests {
    /// Lines of one file, each `(path, data)`.
    static let lines: [(String, String)] = [
        ("items/a", #"{"title": "lake", "n": 1, "tags": ["x", "y", "x"], "meta": {"k": "v", "deep": {"z": true}}}"#),
        ("items/b", #"{"title": "sea", "n": 2.5, "meta": {"deep": {"z": true}}, "at": {"$serverTimestamp": true}}"#),
        ("owners/o1/notes/n1", #"{"title": "note", "n": 3, "flag": null}"#),
        ("items/a", #"{"title": "lake again", "n": 4, "tags": ["x"]}"#),
        ("items/c", #"{"n": 5, "big": "\#(String(repeating: "lorem ipsu", count: 30))"}"#),
    ]
    /// Stored before the import or commit, with fields it replaces.
    static let before = ["items/c": #"{"n": 0, "gone": "yes"}"#]
    /// Queries served by the field index, with the documents each finds.
    static let queries: [(String, [String])] = [
        (#"{"from": "items", "where": [["n", ">=", 1]], "orderBy": [["n", "asc"]]}"#, ["items/b", "items/a", "items/c"]),
        (#"{"from": "items", "where": [["title", "==", "lake again"]]}"#, ["items/a"]),
        (#"{"from": "items", "where": [["title", "==", "lake"]]}"#, []),
        (#"{"from": "items", "where": [["tags", "array-contains", "x"]]}"#, ["items/a"]),
        (#"{"from": "items", "where": [["gone", "==", "yes"]]}"#, []),
        (#"{"from": {"collectionGroup": "notes"}, "where": [["flag", "==", null]]}"#, ["owners/o1/notes/n1"]),
        (#"{"from": "items", "where": [["meta.deep.z", "==", true]]}"#, ["items/b"]),
    ]

    @Test func anImportStoresWhatACommitOfTheSameSetsStores() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/lines.ndjson"
        let text = Self.lines.map { #"{"path": "\#($0.0)", "data": \#($0.1)}"# }.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))

        let imported = try await TestDatabase.open(documents: Self.before)
        defer { imported.close() }
        var limits = DocumentImport.Limits()
        limits.documentsPerBatch = 4  // the file's two batches: the second rewrites nothing of the first
        let outcome = try await DocumentImport(database: imported.database, limits: limits).run(path: file)
        #expect(outcome.finished && outcome.status.documents == Self.lines.count)

        let committed = try await TestDatabase.open(documents: Self.before)
        defer { committed.close() }
        for batch in [Self.lines.prefix(4), Self.lines.suffix(1)] {
            let writes = try batch.map { try Write(kind: "set", path: DocumentPath($0.0), data: JSON.parse($0.1)) }
            _ = try await committed.database.commit(CommitRequest(writes: writes), as: .admin)
        }

        for path in Set(Self.lines.map(\.0)) {
            let a = try #require(try await imported.database.get(DocumentPath(path), as: .admin))
            let b = try #require(try await committed.database.get(DocumentPath(path), as: .admin))
            // The server timestamp differs between the two; every other field is stored byte for byte alike.
            if path == "items/b" {
                #expect(try a.decoded().fields.keys.sorted() == b.decoded().fields.keys.sorted())
            } else {
                #expect(a.data == b.data, "\(path)")
            }
        }
        for (json, expected) in Self.queries {
            let query = try Query(jsonText: json)
            let a = try await imported.database.runQuery(query, as: .admin).documents.map(\.path.description)
            let b = try await committed.database.runQuery(query, as: .admin).documents.map(\.path.description)
            #expect(a == expected, "\(json)")
            #expect(b == expected, "\(json)")
        }
    }

    /// A batch whose paths span no stored document reads none; one whose span holds a stored document reads
    /// each of its own, so a document stored before is replaced with its old index rows gone, as a commit does.
    @Test(arguments: [
        // The stored document inside the second batch's span, not one of its paths; then one of them.
        (["items/a", "items/b", "items/l", "items/n"], ["items/a", "items/b", "items/l", "items/m", "items/n"]),
        (["items/a", "items/b", "items/m", "items/z"], ["items/a", "items/b", "items/m", "items/z"]),
        // Not in path order: every batch's span holds the stored document.
        (["items/z", "items/a", "items/m", "items/b"], ["items/a", "items/b", "items/m", "items/z"]),
    ])
    func batchesBesideAndAroundAStoredDocument(paths: [String], found: [String]) async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/lines.ndjson"
        let text = paths.enumerated().map { #"{"path": "\#($1)", "data": {"n": \#($0 + 1)}}"# }.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let database = try await TestDatabase.open(documents: ["items/m": #"{"n": 0, "gone": "yes"}"#])
        defer { database.close() }
        var limits = DocumentImport.Limits()
        limits.documentsPerBatch = 2
        let outcome = try await DocumentImport(database: database.database, limits: limits).run(path: file)
        #expect(outcome.finished && outcome.status.documents == paths.count)
        let gone = try await database.database.runQuery(Query(jsonText: #"{"from": "items", "where": [["gone", "==", "yes"]]}"#),
                                                        as: .admin).documents
        #expect(gone.map(\.path.description) == (paths.contains("items/m") ? [] : ["items/m"]))
        let all = try await database.database.runQuery(Query(jsonText: #"{"from": "items", "where": [["n", ">=", 0]]}"#),
                                                       as: .admin).documents
        #expect(all.map(\.path.description).sorted() == found)
        #expect(all.count == Set(all.map(\.path)).count)
    }
}
