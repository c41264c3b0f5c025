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
                with the admin key from HEARTH_ADMIN_KEY or the folder's admin.key; over HTTPS when it serves HTTPS, \
                trusting exactly the certificate in its --tls-cert file); otherwise into the folder itself.
                """)

        @Argument(help: "The fixture file.") var file: String
        @Option(help: "Data folder (default ./hearth-data).") var data: String?
        @Option(help: ArgumentHelp(OfflineFunctions.help)) var functions: String?

        func run() async throws {
            let fixture = try Fixtures.parse(file)
            let folder = DataFolder.path(data)
            let report: FixtureLoader.Report
            switch try DataFolderAccess.open(folder, tool: "hearth fixtures load") {
            case .server(let server):
                let documents = FixtureFile(users: fixture.users, documents: fixture.documents)
                var total = try Fixtures.parts(documents).reduce(FixtureLoader.Report(written: 0, unchanged: 0)) { total, part in
                    total + (try FixtureLoader.Report(json: server.send("POST", "/v1/admin/fixtures", body: Array(part.text.utf8))))
                }
                (total.filesWritten, total.filesUnchanged) = try Fixtures.putFiles(fixture, through: server)
                report = total
            case .file(let store):
                defer { store.close() }
                let functions = try OfflineFunctions.load(self.functions)
                let auth = AuthService(storage: OfflineFunctions.accounts(store, functions), hasher: try PasswordHasher())
                let database = Database(storage: SQLiteDocumentStorage(store), functions: functions)
                report = try await FixtureLoader(database: database, auth: auth).load(fixture)
            }
            print("\(file): " + report.summary(files: !fixture.files.isEmpty))
        }
    }

    /// `hearth fixtures export`: prints every document as a fixture file, in path order.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every document of a data folder as a fixture file (stable order, one field per line).",
            discussion: """
                Accounts are not exported: only their password hashes are stored, and a fixture file holds passwords. \
                Stored files are written beside the output file, under files/, and the fixture names them; a data \
                folder that holds files needs --output.
                """)

        @OptionGroup var options: ExportOptions

        func run() async throws {
            try await options.export { database, write in
                let loader = FixtureLoader(database: database)
                var fixture = try await loader.export()
                if let output = options.output {
                    fixture.files = try await loader.exportFiles(into: (output as NSString).deletingLastPathComponent)
                } else if case let count = try await loader.storedFiles().count, count > 0 {
                    throw ValidationError("the data folder holds \(count) files, whose bytes are written beside the fixture "
                                          + "file: give --output FILE")
                }
                try write(Array(fixture.text.utf8))
            }
        }
    }

    /// Stores the fixture's objects through the server's file API (`PUT /v1/files/...`, then `PATCH` for custom
    /// metadata, whose keys a header could not carry in every case), leaving alone those already stored alike.
    static func putFiles(_ fixture: FixtureFile, through server: ServerConnection) throws -> (written: Int, unchanged: Int) {
        var written = 0, unchanged = 0
        for file in fixture.files {
            let (bytes, sha256) = try FixtureLoader.source(of: file, in: fixture.directory)
            let path = "/v1/files/" + file.path.name.split(separator: "/").map { ServerConnection.segment(String($0)) }
                .joined(separator: "/")
            if let stored = try storedFile(path, through: server),
               file.isStored(as: stored, sha256: sha256) {
                unchanged += 1
                continue
            }
            _ = try server.send("PUT", path, body: bytes, contentType: file.contentType ?? FileUpload.defaultContentType,
                                headers: [("X-Hearth-SHA256", StoredFile.hex(sha256))])
            if !file.metadata.isEmpty {
                let change = JSON.object([("metadata", .object(file.metadata.map { ($0.key, JSON.string($0.value)) }))])
                _ = try server.send("PATCH", path, body: change.serialized())
            }
            written += 1
        }
        return (written, unchanged)
    }

    /// The attributes of the object the server stores at `path` (a request path), or nil when there is none.
    static func storedFile(_ path: String, through server: ServerConnection) throws
        -> (sha256: [UInt8], contentType: String, metadata: [String: String])? {
        let json: JSON
        do {
            json = try server.send("GET", path + "?alt=json")
        } catch let error as HearthError where error.code == .notFound {
            return nil
        }
        var metadata: [String: String] = [:]
        if case .object(let pairs)? = json["metadata"] {
            for (key, value) in pairs { metadata[key] = value.stringValue }
        }
        guard let hex = json["sha256"]?.stringValue, let sha256 = TokenHash(hex: hex)?.bytes,
              let contentType = json["contentType"]?.stringValue else {
            throw ToolError("\(server.server) answered GET \(path)?alt=json without the object's sha256 and contentType")
        }
        return (sha256, contentType, metadata)
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
