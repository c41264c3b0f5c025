import Foundation
import HearthCore

/// A fixture file (docs/testing.md, Fixture files): the accounts and the documents of a dataset, documents in
/// the wire encoding (docs/api.md, Values).
public struct FixtureFile: Sendable {
    /// One account of the dataset.
    public struct User: Sendable, Equatable {
        /// The user id, as rules see it in `request.auth.uid`.
        public var uid: String
        /// The sign-in email.
        public var email: String
        /// The password, in clear: fixture files are for development and tests.
        public var password: String
        /// Custom claims, as rules see them in `request.auth.token`.
        public var claims: [String: Value]

        /// Makes a user.
        public init(uid: String, email: String, password: String, claims: [String: Value] = [:]) {
            self.uid = uid
            self.email = email
            self.password = password
            self.claims = claims
        }
    }

    /// The accounts, in file order.
    public var users: [User]
    /// The documents, by path, in path order.
    public var documents: [(path: DocumentPath, data: JSON)]

    /// Makes a dataset.
    public init(users: [User] = [], documents: [(path: DocumentPath, data: JSON)] = []) {
        self.users = users
        self.documents = documents.sorted { $0.path < $1.path }
    }

    /// Reads a fixture file; errors name the file and the place in it.
    public init(path: String) throws(HearthError) {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw .invalidArgument("cannot read the fixture file \(path)")
        }
        do {
            try self.init(json: JSON.parse(Array(bytes)))
        } catch {
            throw .invalidArgument("\(path): \(error.message)")
        }
    }

    /// Reads a fixture file's JSON.
    public init(json: JSON) throws(HearthError) {
        guard case .object(let pairs) = json else {
            throw .invalidArgument("a fixture file must hold a JSON object with \"users\" and \"documents\"")
        }
        for (key, _) in pairs where key != "users" && key != "documents" {
            throw .invalidArgument("unknown key '\(key)' in the fixture file; expected documents, users")
        }
        var users: [User] = []
        var seenUIDs = Set<String>(), seenEmails = Set<String>()
        switch json["users"] {
        case nil, .null?: break
        case .array(let items)?:
            for (i, item) in items.enumerated() {
                let user = try Self.user(item, "users[\(i)]")
                guard seenUIDs.insert(user.uid).inserted else { throw .invalidArgument("users[\(i)]: uid '\(user.uid)' appears twice") }
                guard seenEmails.insert(user.email.lowercased()).inserted else {
                    throw .invalidArgument("users[\(i)]: email '\(user.email)' appears twice")
                }
                users.append(user)
            }
        default: throw .invalidArgument("'users' must be an array")
        }
        var documents: [(path: DocumentPath, data: JSON)] = []
        switch json["documents"] {
        case nil, .null?: break
        case .object(let docs)?:
            for (key, data) in docs {
                let path: DocumentPath
                do { path = try DocumentPath(key) } catch { throw .invalidArgument("documents: '\(key)': \(error.message)") }
                guard case .object = data else { throw .invalidArgument("documents['\(key)'] must be an object of fields") }
                // Parses now, so that a bad value is reported with its document before anything is written.
                do { _ = try Write(kind: "set", path: path, data: data) } catch {
                    throw .invalidArgument("documents['\(key)']: \(error.message)")
                }
                documents.append((path, data))
            }
        default: throw .invalidArgument("'documents' must map document paths to their fields")
        }
        self.init(users: users, documents: documents)
    }

    static func user(_ json: JSON, _ place: String) throws(HearthError) -> User {
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must be an object") }
        for (key, _) in pairs where !["uid", "email", "password", "claims"].contains(key) {
            throw .invalidArgument("unknown key '\(key)' in \(place); expected claims, email, password, uid")
        }
        guard let uid = json["uid"]?.stringValue else { throw .invalidArgument("\(place).uid must be a string") }
        do { try validateID(uid, kind: "uid") } catch { throw .invalidArgument("\(place): \(error.message)") }
        guard let email = json["email"]?.stringValue, email.contains("@") else {
            throw .invalidArgument("\(place).email must be an email address")
        }
        guard let password = json["password"]?.stringValue, !password.isEmpty else {
            throw .invalidArgument("\(place).password must be a non-empty string")
        }
        var claims: [String: Value] = [:]
        if let raw = json["claims"], raw != .null {
            guard case .object = raw, case .map(let map) = try Value(wire: raw, field: "\(place).claims") else {
                throw .invalidArgument("\(place).claims must be an object")
            }
            claims = map
        }
        return User(uid: uid, email: email, password: password, claims: claims)
    }
}
