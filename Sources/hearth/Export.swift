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
        let folder = data ?? ProcessInfo.processInfo.environment["HEARTH_DATA"] ?? "./hearth-data"
        guard FileManager.default.fileExists(atPath: Store.Configuration(dataDirectory: folder).databasePath) else {
            throw ValidationError("no database in \(folder)")
        }
        let handle: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil), let h = FileHandle(forWritingAtPath: output) else {
                throw ValidationError("cannot write \(output)")
            }
            handle = h
        } else {
            handle = FileHandle.standardOutput
        }
        let storage = try Fixtures.open(folder)
        defer { storage.documents.close() }
        let database = Database(storage: storage.documents)
        try await database.exportNDJSON { try handle.write(contentsOf: $0) }
        if output != nil { try handle.close() }
    }
}
