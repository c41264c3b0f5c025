import ArgumentParser
import Foundation
import HearthCore
import HearthEngine

/// `hearth functions`: check a functions file.
struct Functions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a functions file (endpoints, triggers, schedules, timers; docs/functions.md).",
        subcommands: [Check.self]
    )

    /// `hearth functions check FILE`: parses the file as the server would; prints the first mistake with its place.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a functions file; prints what it declares, or its first mistake with its place and exits non-zero.")

        @Argument(help: "The functions file.") var file: String

        func run() throws {
            do {
                let parsed = try FunctionsFile.load(file: file)
                print("\(file): OK (\(parsed.endpoints.count) endpoint(s), \(parsed.triggers.count) trigger(s), "
                      + "\(parsed.schedules.count) schedule(s), \(parsed.timers.count) timer(s))")
            } catch {
                FileHandle.standardError.write(Data("\(error.message)\n".utf8))
                throw ExitCode.failure
            }
        }
    }
}
