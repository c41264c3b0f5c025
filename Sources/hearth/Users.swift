import ArgumentParser
import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Logging

/// `hearth users`: account administration on a data folder, without a running server (or beside one:
/// SQLite's WAL lets both use the file; a running server sees every change on its next request).
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage user accounts in a data folder.",
        subcommands: [Create.self, List.self, SetClaims.self, Delete.self, Revoke.self]
    )

    /// The data folder option shared by the subcommands.
    struct Folder: ParsableArguments {
        @Option(help: "Data folder (default $HEARTH_DATA or ./hearth-data).") var data: String?

        var path: String { data ?? ProcessInfo.processInfo.environment["HEARTH_DATA"] ?? "./hearth-data" }

        /// Runs `body` with an account service over the folder's store, closing the store afterwards.
        func withAccounts<T>(_ body: (AuthService) async throws -> T) async throws -> T {
            guard FileManager.default.fileExists(atPath: path + "/hearth.sqlite") else {
                throw ValidationError("no Hearth database in \(path) (start `hearth serve --data \(path)` once, or pass --data)")
            }
            var configuration = StorageConfiguration(dataDirectory: path)
            // Opening must not rebuild or drop the index entries of a folder a server may be serving.
            configuration.usesServedIndexDefinitions = true
            let storage = try StorageBackend.open(configuration, logger: Logger(label: "hearth.store"))
            defer { storage.documents.close() }
            let auth = AuthService(storage: storage.accounts, hasher: try PasswordHasher())
            return try await body(auth)
        }
    }

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
            let new = AuthService.NewUser(uid: uid, email: email, password: password, displayName: displayName,
                                          emailVerified: emailVerified, claims: try claims.map(Users.claims) ?? [:])
            let user = try await folder.withAccounts { auth in try await auth.createUser(new) }
            Users.printJSON(user.adminJSON)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts as JSON lines, in uid order.")

        @OptionGroup var folder: Folder

        func run() async throws {
            try await folder.withAccounts { auth in
                var token: String?
                repeat {
                    let page = try await auth.listUsers(pageSize: AuthLimits.maxUserPageSize, pageToken: token)
                    for user in page.users { Users.printJSON(user.adminJSON) }
                    token = page.nextPageToken
                } while token != nil
            }
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
            let user = try await folder.withAccounts { auth in try await auth.setClaims(uid: uid, claims: parsed) }
            Users.printJSON(user.adminJSON)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an account and end its sessions.")

        @OptionGroup var folder: Folder
        @Argument(help: "The account's uid.") var uid: String

        func run() async throws {
            try await folder.withAccounts { auth in try await auth.deleteUser(uid: uid) }
            print("deleted \(uid)")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End every session of an account.")

        @OptionGroup var folder: Folder
        @Argument(help: "The account's uid.") var uid: String

        func run() async throws {
            let count = try await folder.withAccounts { auth in try await auth.revokeSessions(uid: uid) }
            print("revoked \(count) sessions of \(uid)")
        }
    }
}
