import ArgumentParser
import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HearthStore
import Logging

/// `hearth fixtures`: load a fixture file into a data folder, or export one as a fixture file.
struct Fixtures: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load or export fixture files (their format: docs/testing.md, Fixture files).",
        subcommands: [Load.self, Export.self]
    )

    /// `hearth fixtures load FILE`: stores the file's documents (idempotently) in the data folder.
    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store a fixture file's documents in a data folder; documents already equal are left alone.")

        @Argument(help: "The fixture file.") var file: String
        @Option(help: "Data folder (default ./hearth-data).") var data: String?

        func run() async throws {
            let fixture = try Fixtures.parse(file)
            let storage = try Fixtures.open(data)
            defer { storage.documents.close() }
            let database = Database(storage: storage.documents)
            let auth = AuthService(storage: storage.accounts, hasher: try PasswordHasher())
            let report = try await FixtureLoader(database: database, auth: auth).load(fixture)
            print("\(file): \(report.written) documents written, \(report.unchanged) unchanged; "
                  + "\(report.usersCreated) users created, \(report.usersExisting) existing")
        }
    }

    /// `hearth fixtures export`: prints every document as a fixture file, in path order.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every document of a data folder as a fixture file (stable order, one field per line).",
            discussion: "Accounts are not exported: only their password hashes are stored, and a fixture file holds passwords.")

        @Option(help: "Data folder (default ./hearth-data).") var data: String?
        @Option(name: .shortAndLong, help: "Write to this file instead of standard output.") var output: String?

        func run() async throws {
            let folder = data ?? ProcessInfo.processInfo.environment["HEARTH_DATA"] ?? "./hearth-data"
            guard FileManager.default.fileExists(atPath: Store.Configuration(dataDirectory: folder).databasePath) else {
                throw ValidationError("no database in \(folder)")
            }
            let storage = try Fixtures.open(folder)
            defer { storage.documents.close() }
            let database = Database(storage: storage.documents)
            let text = try await FixtureLoader(database: database).export().text
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) else {
                    throw ValidationError("cannot write \(output)")
                }
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }

    static func parse(_ file: String) throws -> FixtureFile {
        do { return try FixtureFile(path: file) } catch { throw ValidationError(error.message) }
    }

    static func open(_ data: String?) throws -> StorageBackend {
        let folder = data ?? ProcessInfo.processInfo.environment["HEARTH_DATA"] ?? "./hearth-data"
        var configuration = StorageConfiguration(dataDirectory: folder)
        // The indexes the folder is served with: a load keeps their entries as the server's writes do.
        configuration.usesServedIndexDefinitions = true
        return try StorageBackend.open(configuration, logger: Logger(label: "hearth.fixtures") { _ in SwiftLogNoOpLogHandler() })
    }
}
