import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// The rules test files under `rules/tests/` through the runner, and the `hearth rules` and
/// `hearth serve --rules` command lines against the real binary.
@Suite(.serialized) struct RulesCommandTests {
    /// The package's root folder.
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { break }
        }
        return url.path
    }()

    static func testFiles() throws -> [String] {
        let dir = root + "/rules/tests"
        return try FileManager.default.contentsOfDirectory(atPath: dir)
            .filter { $0.hasSuffix(".test.json") }.sorted().map { dir + "/" + $0 }
    }

    @Test func theProjectsRulesTestFilesPass() async throws {
        let files = try Self.testFiles()
        #expect(files.count >= 4)
        let reports = await RulesTestRunner(workingDirectory: Self.root).run(files: files)
        for report in reports {
            for line in report.failureLines { Issue.record("\(line)") }
        }
        let (passed, failed) = RulesTestRunner.summary(reports)
        #expect(failed == 0)
        #expect(passed >= 100)
    }

    @Test func aFailingCaseAndABrokenFileAreReported() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "service cloud.firestore { match /databases/{d}/documents { match /a/{id} { allow get: if true; } } }"
            .write(toFile: dir + "/ok.rules", atomically: true, encoding: .utf8)
        try #"{"rules": "ok.rules", "cases": [{"name": "opens", "auth": null, "op": "get", "path": "a/x", "expect": "allow"},{"name": "wrong", "auth": null, "op": "get", "path": "b/x", "expect": "allow"}]}"#
            .write(toFile: dir + "/one.test.json", atomically: true, encoding: .utf8)
        try #"{"rules": "missing.rules", "cases": []}"#.write(toFile: dir + "/two.test.json", atomically: true, encoding: .utf8)
        let reports = await RulesTestRunner(workingDirectory: dir).run(files: [dir + "/one.test.json", dir + "/two.test.json"])
        #expect(RulesTestRunner.summary(reports) == (1, 2))
        #expect(reports[0].failureLines.count == 1)
        #expect(reports[0].failureLines.first?.contains("FAIL wrong: expected allow, got deny") == true)
        #expect(reports[1].loadError?.contains("missing.rules") == true)

        // The same through the command line: a line per failure, the summary, a non-zero exit.
        let result = try await CommandResult.run(["rules", "test", dir + "/one.test.json", dir + "/two.test.json"])
        #expect(result.status != 0)
        #expect(result.output.contains("FAIL wrong"))
        #expect(result.output.hasSuffix("1 passed, 2 failed\n"), "\(result.output)")
    }

    @Test func rulesTestCommandRunsTheProjectsFiles() async throws {
        let result = try await CommandResult.run(["rules", "test"] + Self.testFiles(), currentDirectory: Self.root, timeout: 120)
        #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
        #expect(result.output.contains(" passed, 0 failed"))
    }

    @Test func rulesCheckPrintsCaretDiagnostics() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = dir + "/good.rules", bad = dir + "/bad.rules"
        try "service cloud.firestore { match /databases/{d}/documents { match /a/{id} { allow read; } } }"
            .write(toFile: good, atomically: true, encoding: .utf8)
        try "service cloud.firestore {\n  match /databases/{d}/documents {\n    allow read: if 1 +;\n    allow wrte: if true;\n  }\n}\n"
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let ok = try await CommandResult.run(["rules", "check", good])
        #expect(ok.status == 0)
        #expect(ok.output.contains("OK"))
        let broken = try await CommandResult.run(["rules", "check", bad])
        #expect(broken.status != 0)
        #expect(broken.errorOutput.contains("\(bad):3:"))
        #expect(broken.errorOutput.contains("\(bad):4:"))
        #expect(broken.errorOutput.contains("^"))
    }

    @Test func serveRefusesABrokenRulesFile() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "service cloud.firestore { match /x { allow read: if (; } }".write(toFile: dir + "/bad.rules", atomically: true, encoding: .utf8)
        let result = try await CommandResult.run(["serve", "--port", "0", "--data", dir + "/data", "--rules", dir + "/bad.rules"], timeout: 30)
        #expect(result.status != 0)
        #expect(result.errorOutput.contains("bad.rules:1:"), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("^"))
        #expect(!result.output.contains("listening"))
    }

    @Test func withoutRulesTheStartUpLogSaysHowToPassThem() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try await ServerProcess.start(dataDirectory: dir)
        let client = server.client(as: .nobody)
        #expect(try await client.put("/v1/docs/a/x", "{}").status == 403)
        #expect(try await client.put("/v1/docs/a/x", "{}", as: .admin).status == 200)
        #expect(server.outputText.contains("no rules file"))
        #expect(server.outputText.contains("--rules FILE"))
        await client.close()
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }

    /// SIGHUP reloads even when the file's stamp (time and size) did not change; a broken file keeps the old rules.
    @Test func sighupReloadsTheRules() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/app.rules"
        let open = "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /a/{id} { allow read: if true ; } } }"
        let shut = "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /a/{id} { allow read: if false; } } }"
        let torn = "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /a/{id} { allow read: if !!!!!; } } }"
        #expect(open.utf8.count == shut.utf8.count && open.utf8.count == torn.utf8.count)
        try open.write(toFile: file, atomically: false, encoding: .utf8)
        let stamp = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as! Date
        func rewrite(_ text: String) throws {
            try text.write(toFile: file, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.modificationDate: stamp], ofItemAtPath: file)
        }
        let server = try await ServerProcess.start(dataDirectory: dir + "/data", arguments: ["--rules", file])
        let client = server.client(as: .nobody)
        #expect(try await client.put("/v1/docs/a/x", "{}", as: .admin).status == 200)
        #expect(try await client.get("/v1/docs/a/x").status == 200)

        try rewrite(torn)
        server.signal(SIGHUP)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(try await client.get("/v1/docs/a/x").status == 200)

        try rewrite(shut)
        server.signal(SIGHUP)
        var status = 0
        for _ in 0..<50 where status != 403 {
            try await Task.sleep(for: .milliseconds(100))
            status = try await client.get("/v1/docs/a/x").status
        }
        #expect(status == 403)
        await client.close()
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }
}
