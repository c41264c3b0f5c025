import ArgumentParser
import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HearthStore
import Logging

/// `hearth users`: account administration on a data folder. When a server holds the folder, each subcommand
/// is sent to it as the admin API's request (`/v1/admin/users`), so that, for example, a revocation ends the
/// server's open listeners of those sessions at once; with no server running, it acts on the file.
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage user accounts in a data folder.",
        discussion: """
            While a server runs on the folder, the commands act through it (the address it records in the folder, \
            with the admin key from HEARTH_ADMIN_KEY or the folder's admin.key; over HTTPS when it serves HTTPS, \
            trusting exactly the certificate in its --tls-cert file); otherwise they open the folder.
            """,
        subcommands: [Create.self, List.self, SetClaims.self, Delete.self, Revoke.self]
    )

    /// The data folder option shared by the subcommands.
    struct Folder: ParsableArguments {
        @Option(help: "Data folder (default $HEARTH_DATA or ./hearth-data).") var data: String?
        @Option(help: ArgumentHelp(OfflineFunctions.help)) var functions: String?

        var path: String { DataFolder.path(data) }

        /// Runs `server` against the server that holds the folder, or, with none running, `file` with an
        /// account service over the folder's store, closing the store afterwards.
        func act<T>(server: (ServerConnection) throws -> T, file: (AuthService) async throws -> T) async throws -> T {
            guard FileManager.default.fileExists(atPath: Store.Configuration(dataDirectory: path).databasePath) else {
                throw ValidationError("no Hearth database in \(path) (start `hearth serve --data \(path)` once, or pass --data)")
            }
            switch try DataFolderAccess.open(path, tool: "hearth users") {
            case .server(let connection):
                return try server(connection)
            case .file(let store):
                defer { store.close() }
                let storage = OfflineFunctions.accounts(store, try OfflineFunctions.load(functions))
                return try await file(AuthService(storage: storage, hasher: try PasswordHasher()))
            }
        }
    }

    /// The admin API's path of an account.
    static func path(_ uid: String) -> String { "/v1/admin/users/" + ServerConnection.segment(uid) }

    static func printJSON(_ json: JSON) {
        print(json.text)
    }

    static func claims(_ text: String) throws -> [String: Value] {
        do {
            guard case .object(let pairs) = try JSON.parse(text) else {
                throw ValidationError("claims must be a JSON object, e.g. '{\"admin\": true}'")
            }
            var out: [String: Value] = [:]
            for (key, item) in pairs { out[key] = try Value(wire: item, field: "claims.\(key)", depth: 1) }
            return out
        } catch let error as HearthError {
            throw ValidationError("claims: \(error.message)")
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account; prints it as JSON.",
            discussion: "The password is read from standard input (--password-stdin) so it never shows in a process list.")

        @OptionGroup var folder: Folder
        @Option(help: "The uid (default: a random one).") var uid: String?
        @Option(help: "The email address.") var email: String?
        @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false
        @Option(help: "A name to show.") var displayName: String?
        @Flag(help: "Mark the email as verified.") var emailVerified = false
        @Option(help: "Custom claims as a JSON object, e.g. '{\"admin\": true}'.") var claims: String?

        func run() async throws {
            var password: String?
            if passwordStdin {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    throw ValidationError("--password-stdin: no password on standard input")
                }
                password = line
            }
            let parsed = try claims.map(Users.claims) ?? [:]
            let new = AuthService.NewUser(uid: uid, email: email, password: password, displayName: displayName,
                                          emailVerified: emailVerified, claims: parsed)
            let user = try await folder.act(server: { server in
                var body: [(String, JSON)] = []
                if let uid { body.append(("uid", .string(uid))) }
                if let email { body.append(("email", .string(email))) }
                if let password { body.append(("password", .string(password))) }
                if let displayName { body.append(("displayName", .string(displayName))) }
                body.append(("emailVerified", .bool(emailVerified)))
                if let claims { body.append(("claims", try JSON.parse(Array(claims.utf8)))) }
                return try server.send("POST", "/v1/admin/users", body: JSON.object(body).serialized())
            }, file: { auth in try await auth.createUser(new).adminJSON })
            Users.printJSON(user)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts as JSON lines, in uid order.")

        @OptionGroup var folder: Folder

        func run() async throws {
            try await folder.act(server: { server in
                var token: String?
                repeat {
                    let query = "?pageSize=\(AuthLimits.maxUserPageSize)" + (token.map { "&pageToken=" + ServerConnection.segment($0) } ?? "")
                    let page = try server.send("GET", "/v1/admin/users" + query)
                    if case .array(let users)? = page["users"] { for user in users { Users.printJSON(user) } }
                    token = page["nextPageToken"]?.stringValue
                } while token != nil
            }, file: { auth in
                var token: String?
                repeat {
                    let page = try await auth.listUsers(pageSize: AuthLimits.maxUserPageSize, pageToken: token)
                    for user in page.users { Users.printJSON(user.adminJSON) }
                    token = page.nextPageToken
                } while token != nil
            })
        }
    }

    struct SetClaims: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-claims", abstract: "Replace an account's custom claims; prints the account.")

        @OptionGroup var folder: Folder
        @Argument(help: "The account's uid.") var uid: String
        @Argument(help: "The claims as a JSON object ('{}' clears them).") var claims: String

        func run() async throws {
            let parsed = try Users.claims(claims)
            let user = try await folder.act(server: { server in
                try server.send("PUT", Users.path(uid) + "/claims", body: JSON.object([("claims", try JSON.parse(Array(claims.utf8)))]).serialized())
            }, file: { auth in try await auth.setClaims(uid: uid, claims: parsed).adminJSON })
            Users.printJSON(user)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an account and end its sessions.")

        @OptionGroup var folder: Folder
        @Argument(help: "The account's uid.") var uid: String

        func run() async throws {
            try await folder.act(server: { server in _ = try server.send("DELETE", Users.path(uid)) },
                                 file: { auth in try await auth.deleteUser(uid: uid) })
            print("deleted \(uid)")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End every session of an account.")

        @OptionGroup var folder: Folder
        @Argument(help: "The account's uid.") var uid: String

        func run() async throws {
            let count = try await folder.act(server: { server in
                guard case .int(let count)? = try server.send("POST", Users.path(uid) + "/revoke")["revokedSessions"] else {
                    throw ToolError("the server's answer to the revocation has no count")
                }
                return Int(count)
            }, file: { auth in try await auth.revokeSessions(uid: uid) })
            print("revoked \(count) sessions of \(uid)")
        }
    }
}
