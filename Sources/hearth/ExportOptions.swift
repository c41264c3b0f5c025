import ArgumentParser
import Foundation
import HearthEngine

/// What `hearth export` and `hearth fixtures export` share: the folder they read and where they write.
struct ExportOptions: ParsableArguments {
    @Option(help: "Data folder (default ./hearth-data).") var data: String?
    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.") var output: String?

    /// Opens the folder's documents for reading and hands `body` the database and a writer of the output.
    func export(_ body: (Database, ([UInt8]) throws -> Void) async throws -> Void) async throws {
        let storage = try Fixtures.open(DataFolder.existing(data))
        defer { storage.documents.close() }
        let handle = try outputHandle()
        defer { if output != nil { try? handle.close() } }
        try await body(Database(storage: storage.documents)) { try handle.write(contentsOf: $0) }
    }

    /// The file `output` names (created, with its folder, or emptied), else standard output.
    private func outputHandle() throws -> FileHandle {
        guard let output else { return FileHandle.standardOutput }
        let folder = (output as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        guard FileManager.default.createFile(atPath: output, contents: nil), let handle = FileHandle(forWritingAtPath: output) else {
            throw ValidationError("cannot write \(output)")
        }
        return handle
    }
}
