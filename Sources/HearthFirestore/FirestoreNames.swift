import HearthCore

/// A database as Firestore's resource names give it: `projects/{project}/databases/{database}`. The project id
/// names no namespace (as in Firestore's emulator, every project reaches the same data). `(default)` is the
/// documents of `/v1/docs`; another database is a namespace of its own, made on first use: its documents are
/// stored under the document `__databases__/{database}`, which no HTTP path can name, since ids matching
/// `__.*__` are reserved (docs/firestore-compat.md, Databases).
struct FirestoreDatabase: Sendable, Equatable {
    var project: String
    var database: String

    /// The database id of the documents of `/v1/docs`.
    static let defaultID = "(default)"
    /// The root collection that holds the named databases' documents.
    static let namespaceCollection = CollectionPath.namespacesRoot

    /// The segments every stored path of this database starts with (none for `(default)`).
    var prefix: [String] { database == Self.defaultID ? [] : [Self.namespaceCollection, database] }
    /// The document the database's root collections are stored under (nil for `(default)`).
    var rootDocument: DocumentPath? { prefix.isEmpty ? nil : DocumentPath(uncheckedSegments: prefix) }

    /// `projects/{p}/databases/{d}`.
    var name: String { "projects/\(project)/databases/\(database)" }
    /// `projects/{p}/databases/{d}/documents`, the root every document name starts with.
    var documentsRoot: String { name + "/documents" }

    /// Parses `projects/{p}/databases/{d}` (the `database` field of requests).
    init(name: String) throws(HearthError) {
        let parts = Self.parts(name)
        guard parts.count == 4, parts[0] == "projects", parts[2] == "databases", !parts[1].isEmpty, !parts[3].isEmpty else {
            throw .invalidArgument("'\(name.prefix(200))' is not a database name; expected projects/{project}/databases/{database}")
        }
        try self.init(project: String(parts[1]), database: String(parts[3]))
    }

    init(project: String, database: String) throws(HearthError) {
        self.project = project
        self.database = database
        try checkServed()
    }

    /// A database id is `(default)` or Firestore's form: 4 to 63 characters of lowercase letters, digits and
    /// hyphens, starting with a letter.
    func checkServed() throws(HearthError) {
        if database == Self.defaultID { return }
        let bytes = Array(database.utf8)
        let valid = (4...63).contains(bytes.count) && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[0])
            && bytes.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
        guard valid else {
            throw .invalidArgument("'\(database.prefix(100))' is not a database id: use (default), or 4 to 63 lowercase letters, digits and hyphens starting with a letter")
        }
    }

    /// Splits a name under `projects/{p}/databases/{d}/documents` into its database and the path after
    /// `documents` (empty for the root).
    static func split(_ name: String) throws(HearthError) -> (FirestoreDatabase, [String]) {
        let parts = Self.parts(name)
        guard parts.count >= 5, parts[0] == "projects", parts[2] == "databases", parts[4] == "documents",
              !parts[1].isEmpty, !parts[3].isEmpty else {
            throw .invalidArgument(
                "'\(name.prefix(200))' is not a resource name under projects/{project}/databases/{database}/documents")
        }
        let database = try FirestoreDatabase(project: String(parts[1]), database: String(parts[3]))
        var segments: [String] = []
        segments.reserveCapacity(parts.count - 5)
        for part in parts.dropFirst(5) {
            let segment = String(part)
            try validateID(segment, kind: "path segment")
            segments.append(segment)
        }
        return (database, segments)
    }

    /// A name's parts between slashes, empty ones kept. Split on the UTF-8 bytes: `/` is ASCII, so each part is
    /// whole scalars, and no grapheme breaking is done for every name of every request.
    static func parts(_ name: String) -> [Substring] {
        var parts: [Substring] = []
        let utf8 = name.utf8
        var start = utf8.startIndex
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                parts.append(name[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(name[start..<utf8.endIndex])
        return parts
    }

    /// A document's path from its full name, which must be in this database.
    func documentPath(_ name: String) throws(HearthError) -> DocumentPath {
        let (other, segments) = try Self.split(name)
        try checkSame(other, name)
        guard !segments.isEmpty, segments.count % 2 == 0 else {
            throw .invalidArgument("'\(name.prefix(200))' is not a document name: a document path has an even number of segments")
        }
        return DocumentPath(uncheckedSegments: prefix + segments)
    }

    /// The stored document a `parent` names: the root's is `rootDocument` (nil for `(default)`).
    func parentDocument(_ name: String) throws(HearthError) -> DocumentPath? {
        let (other, segments) = try Self.split(name)
        try checkSame(other, name)
        if segments.isEmpty { return rootDocument }
        guard segments.count % 2 == 0 else {
            throw .invalidArgument("parent '\(name.prefix(200))' must be a document or the database's documents root")
        }
        return DocumentPath(uncheckedSegments: prefix + segments)
    }

    /// The database a stored path belongs to, and the path inside it.
    func unprefixed(_ path: DocumentPath) -> (database: String, segments: ArraySlice<String>) {
        let segments = path.segments[...]
        if segments.count > 2, segments.first == Self.namespaceCollection {
            return (segments[segments.startIndex + 1], segments.dropFirst(2))
        }
        return (Self.defaultID, segments)
    }

    func checkSame(_ other: FirestoreDatabase, _ name: String) throws(HearthError) {
        guard other == self else {
            throw .invalidArgument("'\(name.prefix(200))' is not in the request's database \(self.name)")
        }
    }

    /// A stored document's full name, in the database its path belongs to.
    func name(of path: DocumentPath) -> String {
        let (database, segments) = unprefixed(path)
        var name = "projects/"
        name.reserveCapacity(40 + project.utf8.count + database.utf8.count + segments.reduce(0) { $0 + $1.utf8.count + 1 })
        name += project
        name += "/databases/"
        name += database
        name += "/documents/"
        for (k, segment) in segments.enumerated() {
            if k > 0 { name += "/" }
            name += segment
        }
        return name
    }
}

/// The database a parent or document name belongs to (for requests that carry no `database` field).
extension FirestoreDatabase {
    static func of(_ name: String) throws(HearthError) -> FirestoreDatabase { try split(name).0 }
}
