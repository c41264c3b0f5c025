import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// Fixture files that hold stored objects: their `files` entries, loading them once through the same put as
/// any other, a reset that removes every other object, and an export that writes the bytes beside the JSON.
@Suite struct FixtureFilesTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 300)
    static let text = Array("read me\n".utf8)

    static let sources: [String: [UInt8]] = ["img/alice.png": png, "notes/readme.txt": text]

    static let fixture = """
        {"documents": {"users/alice": {"name": "Alice"}},
         "files": {"avatars/alice/me.png": {"source": "img/alice.png", "contentType": "image/png", "metadata": {"Owner": "alice"}},
                   "docs/readme": {"source": "notes/readme.txt"}}}
        """

    @Test func filesLoadOnceAndResetPutsThemBack() async throws {
        let file = try FixtureFolder.write(Self.fixture, files: Self.sources)
        let test = try await TestDatabase.open()
        defer {
            test.close()
            FixtureFolder.remove(file)
        }
        let fixture = try FixtureFile(path: file)
        #expect(fixture.files.map(\.path.name) == ["avatars/alice/me.png", "docs/readme"])
        let loader = FixtureLoader(database: test.database)
        let first = try await loader.load(fixture)
        #expect(first.filesWritten == 2 && first.filesUnchanged == 0 && first.written == 1)
        let avatar = try await test.database.readFile("avatars/alice/me.png", as: .admin)
        #expect(avatar.bytes == Self.png)
        #expect(avatar.file.contentType == "image/png" && avatar.file.metadata == ["Owner": "alice"])
        #expect(try await test.database.readFile("docs/readme", as: .admin).file.contentType == FileUpload.defaultContentType)

        // Loaded again: nothing is written, the generation stays.
        let second = try await loader.load(fixture)
        #expect(second.filesWritten == 0 && second.filesUnchanged == 2)
        #expect(try await test.database.readFile("avatars/alice/me.png", as: .admin).file.generation == avatar.file.generation)

        // Bytes, metadata and an extra object changed by a test; a reset makes the objects the fixture's again.
        _ = try await test.database.putFile("avatars/alice/me.png", Array("other".utf8), as: .admin, contentType: "image/png",
                                            metadata: ["Owner": "alice"])
        _ = try await test.database.updateFile("docs/readme", FileMetadataChange(metadata: ["x": "y"]), as: .admin)
        _ = try await test.database.putFile("junk/left-over", [1, 2, 3], as: .admin)
        let reset = try await loader.reset(to: fixture)
        #expect(reset.filesWritten == 2 && reset.filesUnchanged == 0)
        #expect(try await loader.storedFiles().map(\.path.name) == ["avatars/alice/me.png", "docs/readme"])
        #expect(try await test.database.readFile("avatars/alice/me.png", as: .admin).bytes == Self.png)
        #expect(try await test.database.readFile("docs/readme", as: .admin).file.metadata == [:])
    }

    /// The export writes each object's bytes under `files/` beside the JSON and names them there, so loading
    /// the export into an empty database gives the same objects. An object whose name is also the folder of
    /// others (`a` and `a/b`) is written under its digest.
    @Test func anExportLoadsBackToTheSameObjects() async throws {
        let source = try await TestDatabase.open()
        let copy = try await TestDatabase.open()
        let out = TestFolders.make()
        defer {
            source.close()
            copy.close()
            try? FileManager.default.removeItem(atPath: out)
        }
        _ = try await source.database.putFile("a", Self.text, as: .admin, contentType: "text/plain", metadata: ["k": "v"])
        _ = try await source.database.putFile("a/b", Self.png, as: .admin, contentType: "image/png")
        _ = try await source.database.putFile("photos/été.png", Self.png, as: .admin, contentType: "image/png")
        let loader = FixtureLoader(database: source.database)
        var exported = try await loader.export()
        exported.files = try await loader.exportFiles(into: out)
        let a = try #require(exported.files.first { $0.path.name == "a" })
        #expect(a.source.hasPrefix("files/.sha256/"))
        #expect(exported.files.first { $0.path.name == "a/b" }?.source == "files/a/b")
        try exported.text.write(toFile: out + "/fixture.json", atomically: true, encoding: .utf8)

        let reread = try FixtureFile(path: out + "/fixture.json")
        #expect(reread.files == exported.files)
        #expect(reread.text == exported.text)
        let report = try await FixtureLoader(database: copy.database).load(reread)
        #expect(report.filesWritten == 3)
        for name in ["a", "a/b", "photos/été.png"] {
            let original = try await source.database.readFile(name, as: .admin)
            let loaded = try await copy.database.readFile(name, as: .admin)
            #expect(loaded.bytes == original.bytes, "\(name)")
            #expect(loaded.file.contentType == original.file.contentType && loaded.file.metadata == original.file.metadata, "\(name)")
            #expect(loaded.file.sha256 == original.file.sha256, "\(name)")
        }
    }

    static let badEntries: [(String, String)] = [
        (#"{"files": ["a"]}"#, "'files' must map file paths"),
        (#"{"files": {"a//b": {"source": "notes/readme.txt"}}}"#, "files['a//b']: file path has an empty segment"),
        (#"{"files": {"../a": {"source": "notes/readme.txt"}}}"#, "files['../a']: file path has a '..' segment"),
        (#"{"files": {"a": 1}}"#, "files['a'] must be an object"),
        (#"{"files": {"a": {}}}"#, "files['a'].source must name the file"),
        (#"{"files": {"a": {"source": "nowhere.bin"}}}"#, "files['a'].source: there is no file"),
        (#"{"files": {"a": {"source": "notes"}}}"#, "files['a'].source: there is no file"),
        (#"{"files": {"a": {"source": "/etc/hostname"}}}"#, "must be relative to the fixture file's folder"),
        (#"{"files": {"a": {"source": "notes/readme.txt", "size": 8}}}"#, "unknown key 'size' in files['a']"),
        (#"{"files": {"a": {"source": "notes/readme.txt", "contentType": 5}}}"#, "files['a'].contentType must be a string"),
        (#"{"files": {"a": {"source": "notes/readme.txt", "contentType": ""}}}"#, "files['a']: "),
        (#"{"files": {"a": {"source": "notes/readme.txt", "metadata": {"k": 1}}}}"#, "files['a'].metadata.k must be a string"),
        (#"{"files": {"a": {"source": "notes/readme.txt", "metadata": "k"}}}"#, "files['a'].metadata must be an object"),
    ]

    @Test(arguments: badEntries) func badFileEntriesAreRefusedNamingThePlace(text: String, expected: String) throws {
        let file = try FixtureFolder.write(text, files: Self.sources)
        defer { FixtureFolder.remove(file) }
        do {
            _ = try FixtureFile(path: file)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(error.message.hasPrefix(file), "\(error.message)")
        }
    }

    /// A request body (`POST /v1/admin/fixtures`) has no folder beside it: objects go through the file API.
    @Test func aFixtureWithoutAFolderHoldsNoFiles() throws {
        do {
            _ = try FixtureFile(json: JSON.parse(#"{"files": {"a": {"source": "x"}}}"#))
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains("PUT /v1/files"), "\(error.message)")
        }
    }
}
