import ArgumentParser
import Foundation
import HearthEngine
import HearthRules

/// `hearth rules`: check a rules file, or run rules test files.
struct Rules: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check security rules, or run rules tests.",
        subcommands: [Check.self, Test.self]
    )

    /// `hearth rules check FILE`: compiles the file and prints every diagnostic with its caret.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a rules file; prints every error as file:line:column with a caret, exits non-zero on errors.")

        @Argument(help: "The rules file.") var file: String
        @Flag(help: "Print the syntax tree of a file that compiles.") var printSyntax = false

        func run() throws {
            do {
                let program = try RulesInForce.compile(file: file)
                if printSyntax { print(program.printedSyntax) }
                print("\(file): OK (rules_version \(program.version))")
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode.failure
            }
        }
    }

    /// `hearth rules test FILE...`: runs the cases of rules test files (docs/rules.md) and ends with
    /// `N passed, N failed`.
    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run rules test files; prints a line per failing case and `N passed, N failed`.")

        @Argument(help: "Rules test files (*.test.json).") var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("name at least one rules test file") }
        }

        func run() async throws {
            let reports = await RulesTestRunner().run(files: files)
            for report in reports {
                for line in report.failureLines { print(line) }
            }
            let (passed, failed) = RulesTestRunner.summary(reports)
            print("\(passed) passed, \(failed) failed")
            if failed > 0 { throw ExitCode.failure }
        }
    }
}
