import ArgumentParser
import Foundation
import HearthAuth
import HearthCore
import HearthStore

/// `hearth outbox`: the email queue of a data folder, its pending and dead messages, and retrying the dead.
/// Through the server that holds the folder (`/v1/admin/outbox`), or, with none running, on the file.
struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the email outbox's pending and dead messages, or retry dead ones.",
        discussion: "While a server runs on the folder, the commands act through it; otherwise they open the folder.",
        subcommands: [List.self, Retry.self]
    )

    /// Most messages of each state listed.
    static let listLimit = 1000

    /// Runs `server` against the server that holds the folder, or `file` on the folder's outbox.
    static func act<T>(_ data: String?, server: (ServerConnection) throws -> T, file: (AuthService) async throws -> T) async throws -> T {
        let path = DataFolder.path(data)
        guard FileManager.default.fileExists(atPath: Store.Configuration(dataDirectory: path).databasePath) else {
            throw ValidationError("no Hearth database in \(path) (start `hearth serve --data \(path)` once, or pass --data)")
        }
        switch try DataFolderAccess.open(path, tool: "hearth outbox") {
        case .server(let connection):
            return try server(connection)
        case .file(let store):
            defer { store.close() }
            let storage = SQLiteAuthStorage(file: store, seal: try OutboxSeal.loadOrCreate(dataDirectory: path))
            return try await file(AuthService(storage: storage, hasher: try PasswordHasher()))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print {\"pending\": [...], \"dead\": [...]}: each message's id, recipient, attempts and last error (never its token).")

        @Option(help: "Data folder (default $HEARTH_DATA or ./hearth-data).") var data: String?

        func run() async throws {
            let json = try await Outbox.act(data, server: { try $0.send("GET", "/v1/admin/outbox") }, file: { auth in
                JSON.object([
                    ("pending", .array(try await auth.pendingOutbox(limit: Outbox.listLimit).map(\.adminJSON))),
                    ("dead", .array(try await auth.deadOutbox(limit: Outbox.listLimit).map(\.adminJSON))),
                ])
            })
            print(json.text)
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make dead messages pending again (all, or one with --id); prints {\"retried\": [ids]}.")

        @Option(help: "Data folder (default $HEARTH_DATA or ./hearth-data).") var data: String?
        @Option(help: "The id of one dead message (default: every dead message).") var id: String?

        func run() async throws {
            let json = try await Outbox.act(data, server: { server in
                try server.send("POST", "/v1/admin/outbox/retry",
                                body: JSON.object(id.map { [("id", .string($0))] } ?? []).serialized())
            }, file: { auth in
                let retried = try await auth.retryDeadOutbox(id: id)
                if let id, retried.isEmpty { throw ValidationError("no dead message has the id '\(id)'") }
                return JSON.object([("retried", .array(retried.map { .string($0) }))])
            })
            print(json.text)
        }
    }
}
