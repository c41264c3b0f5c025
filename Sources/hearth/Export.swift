import ArgumentParser
import Foundation
import HearthEngine

/// `hearth export`: every document of a data folder as NDJSON, the format `hearth import` reads.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every document of a data folder as NDJSON, one document a line, in path order (`hearth import` reads it).",
        discussion: "Accounts are not exported. It may run beside a server; the file is then not one snapshot of the folder.")

    @OptionGroup var options: ExportOptions

    func run() async throws {
        try await options.export { database, write in try await database.exportNDJSON(write) }
    }
}
