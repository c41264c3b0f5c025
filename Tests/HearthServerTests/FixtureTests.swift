import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// Fixture files: parsing and its errors, idempotent loading, reset, the stable export, and the
/// `hearth fixtures` and `hearth serve --fixtures/--demo` command lines against the real binary.
@Suite(.serialized) struct FixtureTests {
    static let apps = ["blue-avalanche", "letter", "prolific", "comeover"]

    static func parse(_ text: String) -> HearthError? {
        do { _ = try FixtureFile(json: JSON.parse(text)); return nil } catch { return error }
    }

    @Test func badFixtureFilesAreRefusedNamingThePlace() {
        let cases: [(String, String)] = [
            (#"[]"#, "JSON object"),
            (#"{"docs": {}}"#, "unknown key 'docs'"),
            (#"{"documents": {"users": {"a": 1}}}"#, "'users'"),
            (#"{"documents": {"users/a": 3}}"#, "documents['users/a'] must be an object"),
            (#"{"documents": {"users/a": {"t": {"$timestamp": "yesterday"}}}}"#, "documents['users/a']"),
            (#"{"users": [{"uid": "a", "email": "a@x.io"}]}"#, "users[0].password"),
            (#"{"users": [{"uid": "a", "email": "nope", "password": "p"}]}"#, "users[0].email"),
            (#"{"users": [{"uid": "a", "email": "a@x.io", "password": "p", "role": 1}]}"#, "unknown key 'role' in users[0]"),
            (#"{"users": [{"uid": "a", "email": "a@x.io", "password": "p"}, {"uid": "a", "email": "b@x.io", "password": "p"}]}"#,
             "uid 'a' appears twice"),
        ]
        for (text, expected) in cases {
            let error = Self.parse(text)
            #expect(error?.code == .invalidArgument, "\(text)")
            #expect(error?.message.contains(expected) == true, "\(text): \(error?.message ?? "accepted")")
        }
    }

    @Test func loadingIsIdempotentAndResetRestoresTheDataset() async throws {
        let fixture = try FixtureFile(json: JSON.parse("""
            {"users": [{"uid": "alice", "email": "alice@example.com", "password": "pw-alice", "claims": {"admin": true}}],
             "documents": {"projects/p1": {"owner": "alice", "at": {"$timestamp": "2026-01-02T03:04:05.000006Z"}},
                           "projects/p1/rounds/r1": {"n": 1}, "orphans/o/kids/k": {"x": [1, 2.5, {"$ref": "projects/p1"}]}}}
            """))
        let harness = try await Harness.start(fixture: fixture)
        do {
            try await checkLoadAndReset(harness, fixture)
            await harness.stop()
        } catch {
            await harness.stop()
            throw error
        }
    }

    func checkLoadAndReset(_ harness: Harness, _ fixture: FixtureFile) async throws {
        let database = try #require(harness.database)
        let loader = FixtureLoader(database: database)
        let first = try await harness.client().get("/v1/docs/projects/p1")
        #expect(first.status == 200)
        // A second load writes nothing: update times stay.
        let second = try await loader.loadDocuments(fixture)
        #expect(second.written == 0 && second.unchanged == 3)
        let again = try await harness.client().get("/v1/docs/projects/p1")
        #expect(again.json?["updateTime"] == first.json?["updateTime"])

        let admin = harness.client()
        #expect(try await admin.patch("/v1/docs/projects/p1", #"{"owner": "mallory"}"#).status == 200)
        #expect(try await admin.put("/v1/docs/extra/e1", #"{"a": 1}"#).status == 200)
        #expect(try await admin.delete("/v1/docs/projects/p1/rounds/r1").status == 204)
        try await harness.reset()
        #expect(try await admin.get("/v1/docs/projects/p1").json?["data"]?["owner"]?.stringValue == "alice")
        #expect(try await admin.get("/v1/docs/extra/e1").status == 404)
        #expect(try await admin.get("/v1/docs/projects/p1/rounds/r1").status == 200)
        #expect(try await admin.get("/v1/docs/orphans/o/kids/k").status == 200)

        // The export reaches documents under a missing parent, and reads back to the same dataset.
        let exported = try await loader.export(users: fixture.users)
        #expect(exported.documents.map(\.path.description) == ["orphans/o/kids/k", "projects/p1", "projects/p1/rounds/r1"])
        let reread = try FixtureFile(json: JSON.parse(exported.text))
        #expect(reread.users == fixture.users)
        #expect(reread.text == exported.text)
        for ((p1, d1), (p2, d2)) in zip(reread.documents, fixture.documents) {
            #expect(p1 == p2)
            #expect(try Value.decodeFields(d1) == Value.decodeFields(d2))
        }
        await admin.close()
    }

    @Test func exportTextIsStableAndReadable() async throws {
        let a = try FixtureFile(json: JSON.parse(#"{"documents": {"b/2": {"z": 1, "a": {"y": true, "x": null}}, "a/1": {}}}"#))
        #expect(a.text == """
            {
              "users": [],
              "documents": {
                "a/1": {},
                "b/2": {
                  "a": {"x": null, "y": true},
                  "z": 1
                }
              }
            }

            """)
    }

    @Test func theCommandLineLoadsAndExports() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let data = dir + "/data"
        // Prolific's accounts and documents without its files: a data folder holding files exports only beside a
        // file (-o), which the tests of fixture files cover.
        let prolific = try FixtureFile(path: Harness.projectFile("fixtures/prolific.json"))
        let fixture = FixtureFile(users: prolific.users, documents: prolific.documents)
        let file = dir + "/prolific.json"
        try Data(fixture.text.utf8).write(to: URL(fileURLWithPath: file))
        let load = try await CommandResult.run(["fixtures", "load", file, "--data", data])
        #expect(load.status == 0, "\(load.errorOutput)")
        #expect(load.output.contains("\(fixture.documents.count) documents written, 0 unchanged; \(fixture.users.count) users created, 0 existing"))
        let reload = try await CommandResult.run(["fixtures", "load", file, "--data", data])
        #expect(reload.output.contains("0 documents written, \(fixture.documents.count) unchanged; 0 users created, \(fixture.users.count) existing"))
        let users = try await CommandResult.run(["users", "list", "--data", data])
        for user in fixture.users { #expect(users.output.contains("\"\(user.email)\""), "\(user.email)") }

        let export = try await CommandResult.run(["fixtures", "export", "--data", data])
        #expect(export.status == 0, "\(export.errorOutput)")
        let exported = try FixtureFile(json: JSON.parse(export.output))
        #expect(exported.documents.count == fixture.documents.count)
        #expect(export.output == FixtureFile(documents: fixture.documents).text)
        let toFile = try await CommandResult.run(["fixtures", "export", "--data", data, "-o", dir + "/out.json"])
        #expect(toFile.status == 0)
        #expect(FileManager.default.contents(atPath: dir + "/out.json").map { String(decoding: $0, as: UTF8.self) } == export.output)

        // A broken file changes nothing and says what is wrong.
        try Data(#"{"documents": {"projects/p1": {"t": {"$timestamp": "soon"}}, "projects/p2": {"ok": 1}}}"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/bad.json"))
        let bad = try await CommandResult.run(["fixtures", "load", dir + "/bad.json", "--data", data])
        #expect(bad.status != 0)
        #expect(bad.errorOutput.contains("documents['projects/p1']"), "\(bad.errorOutput)")
        let after = try await CommandResult.run(["fixtures", "export", "--data", data])
        #expect(after.output == export.output)
        let missing = try await CommandResult.run(["fixtures", "export", "--data", dir + "/nothing"])
        #expect(missing.status != 0)
        #expect(missing.errorOutput.contains("no database in \(dir)/nothing"))
    }

    @Test func serveDemoStartsAnAppInATemporaryFolderAndRemovesIt() async throws {
        let key = "demo-test-key-" + makeAutoID() + makeAutoID()
        let server = try await ServerProcess.launch(["serve", "--port", "0", "--demo", "letter"], adminKey: key)
        let text = server.outputText
        #expect(text.contains("demo app letter"))
        #expect(text.contains("admin key: \(key)"))
        #expect(text.contains("alice@example.com / demo-pass-alice"))
        let folder = try #require(text.firstMatch(of: /data in ([^)]+)\)/).map { String($0.1) })
        #expect(FileManager.default.fileExists(atPath: folder))
        // The printed credentials work: alice signs in and reads the categories the rules open to users.
        let client = server.client(as: .nobody)
        let alice = try await client.loggedIn("alice@example.com", "demo-pass-alice")
        #expect(try await client.get("/v1/docs/categories/love", as: .token(alice.token)).status == 200)
        #expect(try await client.get("/v1/docs/categories/love").status == 403)
        await client.close()
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: folder))

        let unknown = try await CommandResult.run(["serve", "--port", "0", "--demo", "twitter"])
        #expect(unknown.status != 0)
        #expect(unknown.errorOutput.contains("unknown demo app 'twitter'; expected one of blue-avalanche, letter, prolific, comeover"))
        let mixed = try await CommandResult.run(["serve", "--port", "0", "--demo", "letter", "--rules", "x.rules"])
        #expect(mixed.status != 0)
        #expect(mixed.errorOutput.contains("--demo brings its own rules"))
    }

    @Test(arguments: apps) func eachDemoAppServesItsDataUnderItsRules(app: String) async throws {
        let server = try await ServerProcess.launch(["serve", "--port", "0", "--demo", app], adminKey: "demo-test-key-" + makeAutoID() + makeAutoID())
        defer { server.signal(SIGKILL) }  // this test is not about shutting down
        let fixture = try FixtureFile(path: Harness.projectFile("fixtures/\(app).json"))
        let admin = server.client()
        let nobody = server.client(as: .nobody)
        for (path, _) in fixture.documents.prefix(5) {
            #expect(try await admin.get("/v1/docs/\(path)").status == 200, "\(path)")
            // Deny by default: nobody signed in reads nothing of any app.
            let denied = try await nobody.get("/v1/docs/\(path)")
            #expect(denied.status == 403 && denied.errorCode == "permission-denied", "\(app) \(path): \(denied.text)")
        }
        // The app's index file is in force: a query on a field it exempts is refused.
        let indexes = try JSON.parse(String(contentsOfFile: Harness.projectFile("indexes/\(app).json"), encoding: .utf8))
        guard case .array(let overrides)? = indexes["fieldOverrides"], let exempted = overrides.first else {
            throw ExpectationFailure("indexes/\(app).json has no field override")
        }
        let group = try #require(exempted["collectionGroup"]?.stringValue), field = try #require(exempted["fieldPath"]?.stringValue)
        let refused = try await admin.query(#"{"from": {"collectionGroup": "\#(group)"}, "where": [["\#(field)", "==", "x"]]}"#)
        #expect(refused.status == 412 && refused.errorCode == "failed-precondition", "\(app): \(refused.text)")
        await admin.close()
        await nobody.close()
    }
}
