import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// Storage cases in rules test files: the project's own file passes through the runner, and a case that
/// is malformed is refused with a message naming it.
@Suite struct StorageRulesTestFileTests {
    @Test func theProjectsStorageCasesPass() async throws {
        let file = Harness.projectFile("rules/tests/storage.test.json")
        let report = await RulesTestRunner().run(file: file)
        #expect(report.loadError == nil, "\(report.loadError ?? "")")
        for line in report.failureLines { Issue.record("\(line)") }
        #expect(report.results.count >= 25)
    }

    static let rules = """
        rules_version = '2';
        service firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read, write; } } }
        """

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let cases: String
        let message: String
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "object on a get",
            cases: #"{"name": "c", "op": "get", "file": "a", "object": {"size": 1}, "expect": "allow"}"#,
            message: "'object' applies to create and update only"),
        Row(name: "path and file together",
            cases: #"{"name": "c", "op": "get", "file": "a", "path": "x/y", "expect": "allow"}"#,
            message: "'path' applies to document cases"),
        Row(name: "files on a document case",
            cases: #"{"name": "c", "op": "get", "path": "x/y", "files": {}, "expect": "allow"}"#,
            message: "'files' applies to storage cases"),
        Row(name: "a bad object path",
            cases: #"{"name": "c", "op": "get", "file": "a//b", "expect": "allow"}"#,
            message: "empty segment"),
        Row(name: "an unknown object key",
            cases: #"{"name": "c", "op": "create", "file": "a", "object": {"bytes": 1}, "expect": "allow"}"#,
            message: "unknown key 'bytes'"),
        Row(name: "a negative size",
            cases: #"{"name": "c", "op": "create", "file": "a", "object": {"size": -1}, "expect": "allow"}"#,
            message: "size must be an integer from 0"),
        Row(name: "metadata that is not strings",
            cases: #"{"name": "c", "op": "create", "file": "a", "object": {"metadata": {"k": 1}}, "expect": "allow"}"#,
            message: "metadata.k must be a string"),
    ]

    @Test(arguments: rows) func malformedCasesAreRefused(_ row: Row) async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.rules.write(toFile: folder + "/s.rules", atomically: true, encoding: .utf8)
        try #"{"rules": "s.rules", "cases": [\#(row.cases)]}"#.write(toFile: folder + "/t.test.json", atomically: true, encoding: .utf8)
        let report = await RulesTestRunner(workingDirectory: folder).run(file: folder + "/t.test.json")
        let error = try #require(report.loadError)
        #expect(error.contains(row.message), "\(error)")
    }

    @Test func createAndUpdateMustSayWhatIsStored() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.rules.write(toFile: folder + "/s.rules", atomically: true, encoding: .utf8)
        try #"""
            {"rules": "s.rules", "files": {"a": {"size": 3}},
             "cases": [{"name": "create of a stored object", "op": "create", "file": "a", "expect": "allow"},
                       {"name": "update of a missing one", "op": "update", "file": "b", "expect": "allow"},
                       {"name": "update", "op": "update", "file": "a", "object": {"size": 4}, "expect": "allow"}]}
            """#.write(toFile: folder + "/t.test.json", atomically: true, encoding: .utf8)
        let report = await RulesTestRunner(workingDirectory: folder).run(file: folder + "/t.test.json")
        #expect(report.results.map(\.outcome) == ["error", "error", "allow"])
        #expect(report.results[0].detail?.contains("a put is an update, not a create") == true)
        #expect(report.results[1].detail?.contains("a put is a create, not an update") == true)
    }
}
