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

    /// `hearth fixtures load FILE`: stores the file's documents (idempotently) in the data folder, through the
    /// server that holds it (`POST /v1/admin/fixtures`, so its listeners see them) or, with none, in the file.
    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store a fixture file's documents in a data folder; documents already equal are left alone.",
            discussion: """
                While a server runs on the folder, the file is loaded through it (the address it records in the folder, \
                with the admin key from HEARTH_ADMIN_KEY or the folder's admin.key); otherwise into the folder itself.
                """)

        @Argument(help: "The fixture file.") var file: String
        @Option(help: "Data folder (default ./hearth-data).") var data: String?

        func run() async throws {
            let fixture = try Fixtures.parse(file)
            let folder = DataFolder.path(data)
            let report: FixtureLoader.Report
            switch try DataFolderAccess.open(folder, tool: "hearth fixtures load") {
            case .server(let server):
                report = try Fixtures.parts(fixture).reduce(FixtureLoader.Report(written: 0, unchanged: 0)) { total, part in
                    total + (try FixtureLoader.Report(json: server.send("POST", "/v1/admin/fixtures", body: Array(part.text.utf8))))
                }
            case .file(let store):
                defer { store.close() }
                let auth = AuthService(storage: SQLiteAuthStorage(file: store), hasher: try PasswordHasher())
                report = try await FixtureLoader(database: Database(storage: SQLiteDocumentStorage(store)), auth: auth).load(fixture)
            }
            print("\(file): \(report.written) documents written, \(report.unchanged) unchanged; "
                  + "\(report.usersCreated) users created, \(report.usersExisting) existing")
        }
    }

    /// `hearth fixtures export`: prints every document as a fixture file, in path order.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every document of a data folder as a fixture file (stable order, one field per line).",
            discussion: "Accounts are not exported: only their password hashes are stored, and a fixture file holds passwords.")

        @OptionGroup var options: ExportOptions

        func run() async throws {
            try await options.export { database, write in
                try write(Array(try await FixtureLoader(database: database).export().text.utf8))
            }
        }
    }

    /// The fixture in parts that each fit in one request (`Limits.maxRequestBody`), the accounts in the first.
    static func parts(_ fixture: FixtureFile) throws -> [FixtureFile] {
        if fixture.text.utf8.count <= Limits.maxRequestBody { return [fixture] }
        guard fixture.documents.count > 1 else {
            throw ToolError("a fixture document is larger than a request may be (\(Limits.maxRequestBody) bytes)")
        }
        let half = fixture.documents.count / 2
        return try parts(FixtureFile(users: fixture.users, documents: Array(fixture.documents[..<half])))
            + parts(FixtureFile(documents: Array(fixture.documents[half...])))
    }

    static func parse(_ file: String) throws -> FixtureFile {
        do { return try FixtureFile(path: file) } catch { throw ValidationError(error.message) }
    }

    /// The folder's database for reading, beside a server if one runs (SQLite lets readers share the file).
    static func open(_ data: String?) throws -> StorageBackend {
        var configuration = StorageConfiguration(dataDirectory: DataFolder.path(data))
        // The indexes the folder is served with: opening rebuilds and drops nothing the server reads.
        configuration.usesServedIndexDefinitions = true
        return try StorageBackend.open(configuration, logger: Logger(label: "hearth.fixtures") { _ in SwiftLogNoOpLogHandler() })
    }
}
