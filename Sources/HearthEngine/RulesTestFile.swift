import Foundation
import HearthCore

/// A rules test file (docs/rules.md, Rules tests): the rules to load, the fixture documents, and the cases, each an
/// operation by a caller with the decision it expects.
public struct RulesTestFile: Sendable {
    /// One case.
    public struct Case: Sendable {
        /// The case's name, as failures name it.
        public var name: String
        /// The caller: nil for an unauthenticated one.
        public var auth: (uid: String, claims: [String: Value])?
        /// `get`, `list`, `create`, `update` or `delete`.
        public var op: String
        /// The document (or, for `list`, the collection).
        public var path: String
        /// The document as it would be stored after the write (`request.resource.data`), for create and update.
        public var data: JSON?
        /// The query of a `list`, in the format of `POST /v1/query` (`from` defaults to `path`).
        public var query: JSON?
        /// True when the case expects `allow`.
        public var expectAllow: Bool
        /// The case's own fixtures, replacing the file's.
        public var fixtures: [(path: DocumentPath, data: JSON)]?
        /// For a storage case, the object (or for `list`, the prefix) instead of `path`.
        public var file: String?
        /// A storage write's object after the write (`request.resource`): `size`, `contentType`, `metadata`.
        public var object: StoredObjectFixture?
        /// The case's own stored objects, replacing the file's.
        public var files: [(path: FilePath, object: StoredObjectFixture)]?
    }

    /// A stored object in a test: its size (the bytes are zeros), content type and custom metadata.
    public struct StoredObjectFixture: Sendable {
        public var size: Int64
        public var contentType: String
        public var metadata: [String: String]
    }

    /// The rules file, resolved against the test file's folder, then the working directory.
    public var rulesPath: String
    /// The fixture documents that exist before each case.
    public var fixtures: [(path: DocumentPath, data: JSON)]
    /// The stored objects that exist before each storage case.
    public var files: [(path: FilePath, object: StoredObjectFixture)]
    /// The cases, in order.
    public var cases: [Case]

    /// Reads a test file; `workingDirectory` is the second place the rules path is looked up.
    public init(path: String, workingDirectory: String = FileManager.default.currentDirectoryPath) throws(HearthError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .invalidArgument("cannot read \(path)") }
        let json = try JSON.parse(Array(data))
        guard case .object(let pairs) = json else { throw .invalidArgument("a rules test file must hold a JSON object") }
        try Self.checkKeys(pairs, ["rules", "fixtures", "files", "cases"], in: "the test file")
        guard let rules = json["rules"]?.stringValue else { throw .invalidArgument("'rules' must name the rules file") }
        let folder = (path as NSString).deletingLastPathComponent
        let candidates = rules.hasPrefix("/") ? [rules]
            : [(folder.isEmpty ? rules : folder + "/" + rules), workingDirectory + "/" + rules]
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw .invalidArgument("rules file '\(rules)' not found next to \(path) or in \(workingDirectory)")
        }
        rulesPath = found
        fixtures = try Self.fixtures(json["fixtures"], "fixtures")
        files = try Self.files(json["files"], "files")
        guard case .array(let items)? = json["cases"] else { throw .invalidArgument("'cases' must be an array") }
        cases = []
        for (i, item) in items.enumerated() {
            cases.append(try Self.testCase(item, "cases[\(i)]"))
        }
    }

    static func testCase(_ json: JSON, _ place: String) throws(HearthError) -> Case {
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must be an object") }
        try checkKeys(pairs, ["name", "auth", "op", "path", "data", "query", "expect", "fixtures", "file", "object", "files"],
                      in: place)
        guard let name = json["name"]?.stringValue else { throw .invalidArgument("\(place).name must be a string") }
        let at = "\(place) '\(name)'"
        guard let op = json["op"]?.stringValue, ["get", "list", "create", "update", "delete"].contains(op) else {
            throw .invalidArgument("\(at): 'op' must be get, list, create, update or delete")
        }
        let expect = json["expect"]?.stringValue
        guard expect == "allow" || expect == "deny" else { throw .invalidArgument("\(at): 'expect' must be \"allow\" or \"deny\"") }
        var testCase = Case(name: name, auth: try auth(json, at), op: op, path: "", data: nil, query: nil,
                            expectAllow: expect == "allow",
                            fixtures: json["fixtures"] == nil ? nil : try fixtures(json["fixtures"], "\(at).fixtures"))
        if json["file"] != nil {
            try storageCase(json, &testCase, at)
            return testCase
        }
        for key in ["object", "files"] where json[key] != nil {
            throw .invalidArgument("\(at): '\(key)' applies to storage cases (with 'file') only")
        }
        guard let path = json["path"]?.stringValue else {
            throw .invalidArgument("\(at): 'path' (a document) or 'file' (a stored object) must be a string")
        }
        let segments: [String]
        do { segments = try parsePathSegments(path) } catch { throw .invalidArgument("\(at): \(error.message)") }
        if (op == "list") != (segments.count % 2 == 1) {
            throw .invalidArgument("\(at): '\(path)' must be a \(op == "list" ? "collection" : "document") path for \(op)")
        }
        if json["data"] != nil, op != "create", op != "update" { throw .invalidArgument("\(at): 'data' applies to create and update only") }
        if (op == "create" || op == "update"), json["data"] == nil { throw .invalidArgument("\(at): \(op) needs 'data'") }
        if json["query"] != nil, op != "list" { throw .invalidArgument("\(at): 'query' applies to list only") }
        testCase.path = path
        testCase.data = json["data"]
        testCase.query = json["query"]
        return testCase
    }

    /// `auth`: null (or absent) for a guest, else `{"uid", "token"?}`.
    static func auth(_ json: JSON, _ at: String) throws(HearthError) -> (uid: String, claims: [String: Value])? {
        switch json["auth"] {
        case nil, .null?: return nil
        case .object(let authPairs)?:
            try checkKeys(authPairs, ["uid", "token"], in: "\(at).auth")
            guard let uid = json["auth"]?["uid"]?.stringValue else { throw .invalidArgument("\(at): auth.uid must be a string") }
            var claims: [String: Value] = [:]
            if let token = json["auth"]?["token"], token != .null {
                guard case .object = token else { throw .invalidArgument("\(at): auth.token must be an object") }
                guard case .map(let m) = try Value(wire: token, field: "auth.token") else {
                    throw .invalidArgument("\(at): auth.token must be a map")
                }
                claims = m
            }
            return (uid, claims)
        default: throw .invalidArgument("\(at): 'auth' must be null or {\"uid\", \"token\"?}")
        }
    }

    /// A case on stored objects: `file` names the object (for `list`, the prefix), `object` is the object after
    /// a create or update, and `files` the stored objects that exist before it.
    static func storageCase(_ json: JSON, _ testCase: inout Case, _ at: String) throws(HearthError) {
        guard let file = json["file"]?.stringValue else { throw .invalidArgument("\(at): 'file' must be a string") }
        for key in ["path", "data", "query"] where json[key] != nil {
            throw .invalidArgument("\(at): '\(key)' applies to document cases; a storage case has 'file' and 'object'")
        }
        let op = testCase.op
        if op != "list" {
            do { _ = try FilePath(file) } catch { throw .invalidArgument("\(at): \(error.message)") }
        }
        if json["object"] != nil, op != "create", op != "update" {
            throw .invalidArgument("\(at): 'object' applies to create and update only")
        }
        testCase.file = file
        if op == "create" || op == "update" { testCase.object = try storedObject(json["object"] ?? .object([]), "\(at).object") }
        testCase.files = json["files"] == nil ? nil : try files(json["files"], "\(at).files")
    }

    /// Stored objects: object path → `{"size"?, "contentType"?, "metadata"?}`.
    static func files(_ json: JSON?, _ place: String) throws(HearthError) -> [(path: FilePath, object: StoredObjectFixture)] {
        guard let json, json != .null else { return [] }
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must map object paths to objects") }
        var out: [(path: FilePath, object: StoredObjectFixture)] = []
        for (key, value) in pairs {
            do { out.append((try FilePath(key), try storedObject(value, "\(place).\(key)"))) } catch {
                throw .invalidArgument("\(place): \(error.message)")
            }
        }
        return out
    }

    /// `{"size"?, "contentType"?, "metadata"?}`: zero bytes of `application/octet-stream` with no metadata
    /// unless given.
    static func storedObject(_ json: JSON, _ place: String) throws(HearthError) -> StoredObjectFixture {
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must be an object") }
        try checkKeys(pairs, ["size", "contentType", "metadata"], in: place)
        var size: Int64 = 0
        if let given = json["size"] {
            guard case .int(let n) = given, n >= 0, n <= maxObjectSize else {
                throw .invalidArgument("\(place).size must be an integer from 0 to \(maxObjectSize)")
            }
            size = n
        }
        var contentType = FileUpload.defaultContentType
        if let given = json["contentType"] {
            guard let text = given.stringValue else { throw .invalidArgument("\(place).contentType must be a string") }
            contentType = text
        }
        var metadata: [String: String] = [:]
        if let given = json["metadata"] {
            guard case .object(let entries) = given else { throw .invalidArgument("\(place).metadata must be an object") }
            for (key, value) in entries {
                guard let text = value.stringValue else { throw .invalidArgument("\(place).metadata.\(key) must be a string") }
                metadata[key] = text
            }
        }
        return StoredObjectFixture(size: size, contentType: contentType, metadata: metadata)
    }

    /// Largest object a test may store (its bytes are written to a temporary store).
    static let maxObjectSize: Int64 = 64 * 1_024 * 1_024

    static func fixtures(_ json: JSON?, _ place: String) throws(HearthError) -> [(path: DocumentPath, data: JSON)] {
        guard let json, json != .null else { return [] }
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must map document paths to data") }
        var out: [(path: DocumentPath, data: JSON)] = []
        for (key, value) in pairs {
            do { out.append((try DocumentPath(key), value)) } catch { throw .invalidArgument("\(place): \(error.message)") }
        }
        return out
    }

    static func checkKeys(_ pairs: [(String, JSON)], _ allowed: Set<String>, in place: String) throws(HearthError) {
        for (key, _) in pairs where !allowed.contains(key) {
            throw .invalidArgument("unknown key '\(key)' in \(place); expected \(allowed.sorted().joined(separator: ", "))")
        }
    }
}
