import ArgumentParser
import Foundation
import HearthEngine
import HearthStore

/// `hearth export`: every document of a data folder as NDJSON, the format `hearth import` reads.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every document of a data folder as NDJSON, one document a line, in path order (`hearth import` reads it).",
        discussion: "Accounts are not exported. It may run beside a server; the file is then not one snapshot of the folder.")

    @Option(help: "Data folder (default ./hearth-data).") var data: String?
    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.") var output: String?

    func run() async throws {
        let folder = try DataFolder.existing(data)
        let handle = try DataFolder.exportHandle(output)
        let storage = try Fixtures.open(folder)
        defer { storage.documents.close() }
        let database = Database(storage: storage.documents)
        try await database.exportNDJSON { try handle.write(contentsOf: $0) }
        if output != nil { try handle.close() }
    }
}
