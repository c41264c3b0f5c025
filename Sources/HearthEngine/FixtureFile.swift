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

    /// One stored object of the dataset: its bytes are a file beside the fixture file.
    public struct File: Sendable, Equatable {
        /// The object's name.
        public var path: FilePath
        /// The file holding the bytes, relative to the fixture file's folder.
        public var source: String
        /// The declared content type; nil for the default.
        public var contentType: String?
        /// Custom metadata.
        public var metadata: [String: String]

        /// Makes a file entry.
        public init(path: FilePath, source: String, contentType: String? = nil, metadata: [String: String] = [:]) {
            self.path = path
            self.source = source
            self.contentType = contentType
            self.metadata = metadata
        }

        /// Whether an object stored with these attributes already is this entry, its bytes `sha256`.
        public func isStored(as stored: (sha256: [UInt8], contentType: String, metadata: [String: String]),
                             sha256: [UInt8]) -> Bool {
            stored.sha256 == sha256 && stored.contentType == (contentType ?? FileUpload.defaultContentType)
                && stored.metadata == metadata
        }
    }

    /// The accounts, in file order.
    public var users: [User]
    /// The documents, by path, in path order.
    public var documents: [(path: DocumentPath, data: JSON)]
    /// The stored objects, in path order.
    public var files: [File]
    /// The folder the files' sources are relative to (the fixture file's); nil for a dataset read from a
    /// request body, which holds no files.
    public var directory: String?

    /// Makes a dataset.
    public init(users: [User] = [], documents: [(path: DocumentPath, data: JSON)] = [], files: [File] = [],
                directory: String? = nil) {
        self.users = users
        self.documents = documents.sorted { $0.path < $1.path }
        self.files = files.sorted { $0.path < $1.path }
        self.directory = directory
    }

    /// Reads a fixture file; errors name the file and the place in it. The files it names must exist.
    public init(path: String) throws(HearthError) {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw .invalidArgument("cannot read the fixture file \(path)")
        }
        do {
            try self.init(json: JSON.parse(Array(bytes)), directory: (path as NSString).deletingLastPathComponent)
        } catch {
            throw .invalidArgument("\(path): \(error.message)")
        }
    }

    /// Reads a fixture file's JSON; `directory` is the folder its files' sources are relative to (nil: it may
    /// hold no files).
    public init(json: JSON, directory: String? = nil) throws(HearthError) {
        guard case .object(let pairs) = json else {
            throw .invalidArgument("a fixture file must hold a JSON object with \"users\" and \"documents\"")
        }
        for (key, _) in pairs where !["users", "documents", "files"].contains(key) {
            throw .invalidArgument("unknown key '\(key)' in the fixture file; expected documents, files, users")
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
        var files: [File] = []
        switch json["files"] {
        case nil, .null?: break
        case .object(let entries)?:
            guard let directory else {
                throw .invalidArgument("'files' is read from a fixture file, whose folder holds the files' bytes; "
                                       + "a request stores objects with PUT /v1/files")
            }
            for (key, entry) in entries { files.append(try Self.file(key, entry, directory: directory)) }
        default: throw .invalidArgument("'files' must map file paths to their sources")
        }
        self.init(users: users, documents: documents, files: files, directory: directory)
    }

    static func file(_ key: String, _ json: JSON, directory: String) throws(HearthError) -> File {
        let place = "files['\(key)']"
        let path: FilePath
        do { path = try FilePath(key) } catch { throw .invalidArgument("\(place): \(error.message)") }
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must be an object") }
        for (key, _) in pairs where !["source", "contentType", "metadata"].contains(key) {
            throw .invalidArgument("unknown key '\(key)' in \(place); expected contentType, metadata, source")
        }
        guard let source = json["source"]?.stringValue, !source.isEmpty else {
            throw .invalidArgument("\(place).source must name the file holding the bytes")
        }
        guard !source.hasPrefix("/") else {
            throw .invalidArgument("\(place).source must be relative to the fixture file's folder, not '\(source)'")
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory + "/" + source, isDirectory: &isFolder), !isFolder.boolValue else {
            throw .invalidArgument("\(place).source: there is no file \(directory)/\(source)")
        }
        var contentType: String?
        switch json["contentType"] {
        case nil, .null?: break
        case .string(let type)?: contentType = type
        default: throw .invalidArgument("\(place).contentType must be a string")
        }
        var metadata: [String: String] = [:]
        switch json["metadata"] {
        case nil, .null?: break
        case .object(let entries)?:
            for (name, value) in entries {
                guard let text = value.stringValue else { throw .invalidArgument("\(place).metadata.\(name) must be a string") }
                metadata[name] = text
            }
        default: throw .invalidArgument("\(place).metadata must be an object of strings")
        }
        do { try Database.checkAttributes(contentType: contentType, metadata: metadata) } catch {
            throw .invalidArgument("\(place): \(error.message)")
        }
        return File(path: path, source: source, contentType: contentType, metadata: metadata)
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
