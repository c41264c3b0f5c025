import Foundation
import HearthCore
import HearthTesting
import Testing

/// The examples of the documentation, run as printed against a real `hearth serve` over HTTP (the convention:
/// docs/testing.md, "Examples in the documentation"), and the command-line reference compared with what the
/// command definitions print.
@Suite(.serialized) struct DocExampleTests {
    /// Every markdown file with examples to run.
    static let files = [
        "README.md", "docs/api.md", "docs/rules.md", "docs/testing.md", "docs/porting.md", "docs/functions.md",
        "docs/apps/blue-avalanche.md", "docs/apps/comeover.md", "docs/apps/letter.md", "docs/apps/prolific.md", "docs/browsers.md",
    ]

    /// Every markdown file of the documentation.
    static func markdownFiles() throws -> [String] {
        let root = DocExamples.projectRoot
        let docs = try FileManager.default.subpathsOfDirectory(atPath: root + "/docs")
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        return (["README.md"] + docs).sorted()
    }

    @Test(arguments: files) func examplesRunAsPrinted(_ file: String) async throws {
        let examples = try DocExamples(path: DocExamples.projectRoot + "/" + file, name: file)
        #expect(!examples.blocks.isEmpty, "\(file) has no runnable example")
        for failure in try await examples.run() { Issue.record("\(failure)") }
    }

    /// A shell block that makes requests is a runnable example, so no request in the docs goes untested.
    @Test func everyRequestInTheDocsIsARunnableExample() throws {
        for file in try Self.markdownFiles() {
            let lines = try String(contentsOfFile: DocExamples.projectRoot + "/" + file, encoding: .utf8).components(separatedBy: "\n")
            var fence: (info: String, line: Int)?
            for (n, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                if let open = fence {
                    // A request is a command that starts with curl (not a package named curl in an install line).
                    let requests = lines[(open.line + 1)..<n].contains { line in
                        let command = line.trimmingCharacters(in: .whitespaces)
                        return command.hasPrefix("curl ") || command.contains("$(curl ")
                    }
                    if open.info.hasPrefix("sh"), requests, !open.info.contains("example") {
                        Issue.record("\(file):\(open.line + 1): a block with curl requests is not marked `sh example`")
                    }
                    fence = nil
                } else {
                    fence = (String(line.trimmingCharacters(in: .whitespaces).dropFirst(3)), n)
                }
            }
            #expect(fence == nil, "\(file): a code block is not closed")
        }
        #expect(Set(Self.files).isSubset(of: try Self.markdownFiles()))
    }

    @Test func aBrokenExampleFails() async throws {
        let markdown = """
            ```sh server
            hearth serve
            ```

            ```sh example
            KEY=$(cat hearth-data/admin.key)
            curl -s -X PUT localhost:8080/v1/docs/users/alice -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '{"name": "Alice"}'
            # → 200 {"path": "users/alice", "data": {"name": "Bob"}}
            curl -s localhost:8080/v1/docs/users/nobody -H "Authorization: Bearer $KEY"
            # → 200
            curl -s localhost:8080/v1/docs/users/alice -H "Authorization: Bearer $KEY"
            # → 200 {"path": "users/alice",
            #        "data": {"name": "Alice"}, "createTime": "…"}
            echo $UNSET_VARIABLE
            ```
            """
        let failures = try await DocExamples(markdown: markdown, file: "broken.md").run()
        #expect(failures.count == 3, "\(failures)")
        #expect(failures.contains { $0.hasPrefix("broken.md:14: ") && $0.contains("UNSET_VARIABLE") })
        #expect(failures.contains { $0.hasPrefix("broken.md:8: answer.data.name is \"Alice\", expected \"Bob\"") })
        #expect(failures.contains { $0.hasPrefix("broken.md:10: expected status 200, got 404") })
    }

    @Test func answersMatchTheShapeTheyShow() throws {
        func check(_ expected: String, _ actual: String) throws -> String? {
            DocExamples.mismatch(try JSON.parse(expected), try JSON.parse(actual), at: "answer")
        }
        #expect(try check(#"{"a": "…", "b": [1, "…"]}"#, #"{"a": {"x": 1}, "b": [1, 2, 3], "c": 0}"#) == nil)
        #expect(try check(#"{"b": [1]}"#, #"{"b": [1, 2]}"#) == "answer.b has 2 elements, expected 1")
        #expect(try check(#"{"a": 1}"#, #"{"a": 1.0}"#) == nil)
        #expect(try check(#"{"a": "…"}"#, #"{}"#) == "answer.a is missing")
    }

    /// docs/cli.md is what `hearth reference` prints from the command definitions.
    @Test func theCommandLineReferenceIsUpToDate() async throws {
        let result = try await CommandResult.run(["reference"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let path = DocExamples.projectRoot + "/docs/cli.md"
        let written = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        if written != result.output {
            let (old, new) = (written.components(separatedBy: "\n"), result.output.components(separatedBy: "\n"))
            let line = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
            Issue.record("""
                docs/cli.md differs from the command definitions at line \(line + 1): it has \
                "\(line < old.count ? old[line] : "(the end)")", the definitions give "\(line < new.count ? new[line] : "(the end)")"; \
                regenerate it with `swift run hearth reference > docs/cli.md`
                """)
        }
        for needle in ["`hearth users create`", "--uid", "--display-name", "--email-verified", "--output", "HEARTH_DATA", "HEARTH_HOST",
                       "HEARTH_PORT", "HEARTH_ACCESS_TOKEN_LIFETIME", "HEARTH_REFRESH_TOKEN_LIFETIME", "`autoIds`", "`indexWrites`"] {
            #expect(result.output.contains(needle), "the reference does not mention \(needle)")
        }
    }
}
