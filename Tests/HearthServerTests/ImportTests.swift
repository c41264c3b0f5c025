import Foundation
import HearthCore
import HearthTesting
import Testing

/// `hearth import` and `hearth export` as a user runs them: both input formats, interruptions (kill -9,
/// Ctrl-C) resumed to the state an uninterrupted import reaches, malformed input stopping before its batch
/// with the line named, a missing file, a server holding the folder, and the progress it prints.
@Suite(.serialized) struct ImportTests {
    static let documents = 2_400

    /// Line `i` of the NDJSON test file: nested documents too, and every kind of value the wire encodes.
    static func line(_ i: Int) -> String {
        let path = i % 10 == 0 ? "owners/o\(i % 7)/notes/n\(i)" : "items/i\(i)"
        return #"{"path": "\#(path)", "data": {"n": \#(i), "cat": "c\#(i % 13)", "tags": ["t\#(i % 5)", "t\#(i % 3)"], "#
            + #""at": {"$timestamp": "2026-11-26T10:00:00.000000Z"}, "m": {"x": \#(Double(i) / 4), "ok": \#(i % 2 == 0)}}}"#
    }

    static func ndjson(_ count: Int = documents) -> String { (0..<count).map(line).joined(separator: "\n") + "\n" }

    /// The same documents as a fixture file, with two accounts the import leaves out.
    static func fixture(_ count: Int = documents) -> String {
        let docs = (0..<count).map { i in
            let parsed = try! JSON.parse(line(i))
            var w = JSONWriter()
            w.write(parsed["data"]!)
            return "    \"\(parsed["path"]!.stringValue!)\": " + String(decoding: w.bytes, as: UTF8.self)
        }
        return """
            {
              "users": [{"uid": "u1", "email": "u1@example.com", "password": "pw-u1-long"}, {"uid": "u2", "email": "u2@example.com", "password": "pw-u2-long"}],
              "documents": {
            \(docs.joined(separator: ",\n"))
              }
            }

            """
    }

    static func write(_ text: String, name: String) throws -> String {
        let path = TestFolders.make() + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every document of a folder (path and data, times aside), read back with `hearth export`.
    static func exported(_ folder: String) async throws -> [String: JSON] {
        let r = try await CommandResult.run(["export", "--data", folder])
        #expect(r.status == 0, "\(r.errorOutput)")
        var out: [String: JSON] = [:]
        for line in r.output.split(separator: "\n") {
            let doc = try JSON.parse(String(line))
            out[doc["path"]!.stringValue!] = doc["data"]
        }
        return out
    }

    /// What every test's import must reach: the file's documents, as the parsed lines say.
    static func expected(_ count: Int = documents) throws -> [String: JSON] {
        var out: [String: JSON] = [:]
        for i in 0..<count {
            let parsed = try JSON.parse(line(i))
            out[parsed["path"]!.stringValue!] = parsed["data"]
        }
        return out
    }

    struct Input: Sendable, CustomTestStringConvertible {
        var name: String
        var text: @Sendable () -> String
        var testDescription: String { name }
    }

    static let inputs = [
        Input(name: "docs.ndjson", text: { ndjson() }),
        // A fixture file named .json: its format comes from its content.
        Input(name: "fixture.json", text: { fixture() }),
    ]

    @Test(arguments: inputs) func aFileIsImportedWithProgress(input: Input) async throws {
        let file = try Self.write(input.text(), name: input.name)
        let folder = TestFolders.make() + "/data"
        let r = try await CommandResult.run(["import", file, "--data", folder, "--batch", "300"])
        #expect(r.status == 0, "\(r.errorOutput)")
        #expect(r.errorOutput.contains("hearth import: done: \(Self.documents) documents from \(file) are in \(folder)"), "\(r.errorOutput)")
        #expect(r.errorOutput.contains(#/hearth import: \d+ documents \(\d+/s\), line \d+, \d+% of /#), "\(r.errorOutput)")
        #expect(r.errorOutput.contains("accounts were not imported") == input.name.hasSuffix(".json"), "\(r.errorOutput)")
        #expect(try await Self.exported(folder) == Self.expected())
        // Run again: nothing to do, and nothing changes; --restart imports again, leaving equal documents alone.
        let again = try await CommandResult.run(["import", file, "--data", folder])
        #expect(again.status == 0 && again.errorOutput.contains("was imported into \(folder) already (\(Self.documents) documents)"),
                "\(again.errorOutput)")
        let restarted = try await CommandResult.run(["import", file, "--data", folder, "--restart", "--batch", "1000"])
        #expect(restarted.status == 0 && restarted.errorOutput.contains("done: \(Self.documents) documents"), "\(restarted.errorOutput)")
        #expect(try await Self.exported(folder) == Self.expected())
    }

    /// The NDJSON `hearth export` writes imports into another folder as the same documents, which a server then
    /// finds by query.
    @Test func anExportImportsAsTheSameDocuments() async throws {
        let source = TestFolders.make() + "/source"
        #expect(try await CommandResult.run(["import", try Self.write(Self.fixture(300), name: "f.json"), "--data", source]).status == 0)
        let export = try await CommandResult.run(["export", "--data", source, "-o", source + ".ndjson"])
        #expect(export.status == 0, "\(export.errorOutput)")
        let copy = TestFolders.make() + "/copy"
        let r = try await CommandResult.run(["import", source + ".ndjson", "--data", copy])
        #expect(r.status == 0, "\(r.errorOutput)")
        #expect(try await Self.exported(copy) == Self.expected(300))
        let server = try await ServerProcess.start(dataDirectory: copy)
        let found = try await server.client().query(#"{"from": "items", "where": [["cat", "==", "c4"]]}"#)
        #expect(found.documentIDs.count == (0..<300).filter { $0 % 10 != 0 && $0 % 13 == 4 }.count)
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }

    /// An import stopped after some batches, by `kill -9` or by Ctrl-C, then run again, ends with what an
    /// uninterrupted import has.
    @Test(arguments: [("docs.ndjson", "KILL"), ("docs.ndjson", "INT"), ("fixture.json", "KILL"), ("fixture.json", "INT")])
    func anInterruptedImportResumesWhereItStopped(name: String, signal: String) async throws {
        let file = try Self.write(name.hasSuffix(".ndjson") ? Self.ndjson() : Self.fixture(), name: name)
        let folder = TestFolders.make() + "/data"
        let first = try await CommandResult.run(["import", file, "--data", folder, "--batch", "200", "--raise-after-batches", "3:\(signal)"])
        if signal == "KILL" {
            #expect(first.status == 128 + SIGKILL || first.status == SIGKILL, "status \(first.status)")
        } else {
            #expect(first.status == 130, "\(first.errorOutput)")
            #expect(first.errorOutput.contains(#/interrupted: \d+ documents are imported, the lines before line \d+; run the same command again to continue from line \d+/#),
                    "\(first.errorOutput)")
        }
        let partial = try await Self.exported(folder).count
        #expect(partial >= 600 && partial < Self.documents, "\(partial) documents after the interruption")
        let second = try await CommandResult.run(["import", file, "--data", folder, "--batch", "200"])
        #expect(second.status == 0, "\(second.errorOutput)")
        #expect(second.errorOutput.contains("(\(partial) documents imported before)"), "\(second.errorOutput)")
        #expect(second.errorOutput.contains("done: \(Self.documents) documents"), "\(second.errorOutput)")
        #expect(try await Self.exported(folder) == Self.expected())
    }

    /// Malformed input stops the import before the batch that holds it is written, naming the line; once the
    /// line is fixed, the same command continues from the start of that batch.
    @Test(arguments: [
        (#"{"path": "items/x", "data": {"n": }}"#, "bad.ndjson:5: malformed JSON"),
        (#"{"path": "items/x", "data": {"n": 1}, "extra": 2}"#, "bad.ndjson:5: unknown key 'extra'"),
        (#"{"path": "items", "data": {"n": 1}}"#, "bad.ndjson:5: 'items':"),
        (#"{"path": "items/x", "data": [1]}"#, "bad.ndjson:5: the data of items/x must be an object of fields, got an array"),
        (#"{"path": "items/x", "data": {"n": {"$nope": 1}}}"#, "bad.ndjson:5: items/x:"),
        (#"{"path": "items/x"}"#, "bad.ndjson:5: items/x has no 'data'"),
        (#"["items/x"]"#, "bad.ndjson:5: expected a document"),
    ])
    func malformedInputStopsBeforeItsBatch(bad: String, message: String) async throws {
        var lines = (0..<9).map(Self.line)
        let good = lines[4]
        lines[4] = bad
        let file = try Self.write(lines.joined(separator: "\n") + "\n", name: "bad.ndjson")
        let folder = TestFolders.make() + "/data"
        let r = try await CommandResult.run(["import", file, "--data", folder, "--batch", "3"])
        #expect(r.status == 1)
        #expect(r.errorOutput.contains(message), "\(r.errorOutput)")
        #expect(r.errorOutput.contains("nothing from line 4 on is written (3 documents before it are imported); importing the file again continues from line 4"),
                "\(r.errorOutput)")
        #expect(try await Self.exported(folder).count == 3)
        lines[4] = good
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let fixed = try await CommandResult.run(["import", file, "--data", folder, "--batch", "3"])
        #expect(fixed.status == 0 && fixed.errorOutput.contains("resuming \(file) at line 4 (3 documents imported before)"), "\(fixed.errorOutput)")
        #expect(try await Self.exported(folder) == Self.expected(9))
    }

    /// A fixture file broken part way: the same stop, with the line of the document.
    @Test func aMalformedFixtureNamesItsLine() async throws {
        var text = Self.fixture(10)
        text = text.replacingOccurrences(of: #""n":7,"#, with: #""n":{"$int":"x"},"#)
        let file = try Self.write(text, name: "broken.json")
        let folder = TestFolders.make() + "/data"
        let r = try await CommandResult.run(["import", file, "--data", folder, "--batch", "4"])
        #expect(r.status == 1)
        // Line 1 is `{`, 2 the accounts, 3 `"documents": {`, so document 7 is on line 11.
        #expect(r.errorOutput.contains("broken.json:11: items/i7:"), "\(r.errorOutput)")
        #expect(r.errorOutput.contains("(4 documents before it are imported)"), "\(r.errorOutput)")
    }

    /// A file changed before where an import stopped is not resumed (its offsets mean something else).
    @Test func aFileChangedBeforeTheStopIsNotResumed() async throws {
        let file = try Self.write(Self.ndjson(), name: "docs.ndjson")
        let folder = TestFolders.make() + "/data"
        _ = try await CommandResult.run(["import", file, "--data", folder, "--batch", "200", "--raise-after-batches", "2:KILL"])
        try ("\n" + Self.ndjson()).write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await CommandResult.run(["import", file, "--data", folder])
        #expect(r.status == 1)
        #expect(r.errorOutput.contains("changed before line 401, where its import into this data folder stopped; pass --restart"),
                "\(r.errorOutput)")
        let restarted = try await CommandResult.run(["import", file, "--data", folder, "--restart"])
        #expect(restarted.status == 0, "\(restarted.errorOutput)")
        #expect(try await Self.exported(folder) == Self.expected())
    }

    @Test func aMissingFileChangesNothing() async throws {
        let folder = TestFolders.make() + "/data"
        let r = try await CommandResult.run(["import", folder + "/nope.ndjson", "--data", folder])
        #expect(r.status == 1)
        #expect(r.errorOutput.contains("hearth import: no such file: \(folder)/nope.ndjson"), "\(r.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    /// A server holds the folder: the import refuses, naming it and its pid; a server cannot start on a folder
    /// an import holds either (the lock is the folder's).
    @Test func aServerOnTheFolderIsNamed() async throws {
        let folder = TestFolders.make() + "/data"
        let server = try await ServerProcess.start(dataDirectory: folder)
        let file = try Self.write(Self.ndjson(10), name: "docs.ndjson")
        let r = try await CommandResult.run(["import", file, "--data", folder])
        #expect(r.status == 1)
        #expect(r.errorOutput.contains("the data folder \(folder) is in use by hearth serve (pid \(server.pid)); stop it (kill \(server.pid)), then run this import again"),
                "\(r.errorOutput)")
        #expect(try await server.client().get("/v1/docs/items/i1").status == 404)
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
        #expect(try await CommandResult.run(["import", file, "--data", folder]).status == 0)
    }
}
