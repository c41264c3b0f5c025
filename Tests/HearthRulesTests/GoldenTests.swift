import Foundation
import Testing
import HearthRules

/// Golden tests: every `Golden/<name>.rules` compiles to the printed syntax tree, or fails with the caret
/// diagnostics, in `Golden/<name>.expected`. Set `HEARTH_UPDATE_GOLDEN=1` to rewrite the expected files.
@Suite struct GoldenTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static var cases: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".rules") }.map { String($0.dropLast(6)) }.sorted()
    }

    static func render(_ name: String) throws -> String {
        let source = try String(contentsOf: folder.appendingPathComponent(name + ".rules"), encoding: .utf8)
        do {
            return try RulesProgram.compile(source: source, fileName: name + ".rules").printedSyntax
        } catch {
            return error.description + "\n"
        }
    }

    @Test func goldenFolderIsNotEmpty() {
        #expect(Self.cases.count >= 8)
    }

    @Test(arguments: cases)
    func golden(_ name: String) throws {
        let actual = try Self.render(name)
        let expectedURL = Self.folder.appendingPathComponent(name + ".expected")
        if ProcessInfo.processInfo.environment["HEARTH_UPDATE_GOLDEN"] == "1" {
            try actual.write(to: expectedURL, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: expectedURL, encoding: .utf8)
        #expect(actual == expected, "golden mismatch for \(name)")
    }

    @Test func errorFilesReportSeveralErrors() throws {
        for name in Self.cases where name.hasPrefix("errors_") {
            let rendered = try Self.render(name)
            let count = rendered.components(separatedBy: ": error: ").count - 1
            #expect(count >= 3, "\(name) should report several errors, got \(count)")
        }
    }

    @Test func diagnosticsNameFileLineColumnWithCaret() {
        do {
            _ = try RulesProgram.compile(source: "service cloud.firestore {\n  match /a/{b} {\n    allow read: if 1 +;\n  }\n}\n",
                                         fileName: "x.rules")
            Issue.record("expected a compile error")
        } catch {
            #expect(error.diagnostics.count == 1)
            #expect(error.description == """
                x.rules:3:23: error: expected an expression, found ';'
                    allow read: if 1 +;
                                      ^
                """)
        }
    }
}
