import HearthCore

/// A database as Firestore's resource names give it: `projects/{project}/databases/{database}`. Hearth serves
/// one database, `(default)`, whatever the project id (as Firestore's emulator does); its documents are those of
/// `/v1/docs`. Another database id answers NOT_FOUND (docs/firestore-compat.md, Databases).
struct FirestoreDatabase: Sendable, Equatable {
    var project: String
    var database: String

    /// The database id Hearth serves.
    static let defaultID = "(default)"

    /// `projects/{p}/databases/{d}`.
    var name: String { "projects/\(project)/databases/\(database)" }
    /// `projects/{p}/databases/{d}/documents`, the root every document name starts with.
    var documentsRoot: String { name + "/documents" }

    /// Parses `projects/{p}/databases/{d}` (the `database` field of requests).
    init(name: String) throws(HearthError) {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
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

    /// Only `(default)` is served; a named database is refused the same way wherever it appears.
    func checkServed() throws(HearthError) {
        guard database == Self.defaultID else {
            throw .notFound("database '\(database.prefix(100))' does not exist: Hearth serves only the (default) database")
        }
    }

    /// Splits a name under `projects/{p}/databases/{d}/documents` into its database and the path after
    /// `documents` (empty for the root).
    static func split(_ name: String) throws(HearthError) -> (FirestoreDatabase, [String]) {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 5, parts[0] == "projects", parts[2] == "databases", parts[4] == "documents",
              !parts[1].isEmpty, !parts[3].isEmpty else {
            throw .invalidArgument(
                "'\(name.prefix(200))' is not a resource name under projects/{project}/databases/{database}/documents")
        }
        let database = try FirestoreDatabase(project: String(parts[1]), database: String(parts[3]))
        var segments: [String] = []
        for part in parts.dropFirst(5) {
            try validateID(String(part), kind: "path segment")
            segments.append(String(part))
        }
        return (database, segments)
    }

    /// A document's path from its full name, which must be in this database.
    func documentPath(_ name: String) throws(HearthError) -> DocumentPath {
        let (other, segments) = try Self.split(name)
        try checkSame(other, name)
        guard !segments.isEmpty, segments.count % 2 == 0 else {
            throw .invalidArgument("'\(name.prefix(200))' is not a document name: a document path has an even number of segments")
        }
        return DocumentPath(uncheckedSegments: segments)
    }

    /// The document a `parent` names (nil for the root, `.../documents`).
    func parentDocument(_ name: String) throws(HearthError) -> DocumentPath? {
        let (other, segments) = try Self.split(name)
        try checkSame(other, name)
        if segments.isEmpty { return nil }
        guard segments.count % 2 == 0 else {
            throw .invalidArgument("parent '\(name.prefix(200))' must be a document or the database's documents root")
        }
        return DocumentPath(uncheckedSegments: segments)
    }

    func checkSame(_ other: FirestoreDatabase, _ name: String) throws(HearthError) {
        guard other == self else {
            throw .invalidArgument("'\(name.prefix(200))' is not in the request's database \(self.name)")
        }
    }

    /// A document's full name.
    func name(of path: DocumentPath) -> String { documentsRoot + "/" + path.description }
}

/// The database a parent or document name belongs to (for requests that carry no `database` field).
extension FirestoreDatabase {
    static func of(_ name: String) throws(HearthError) -> FirestoreDatabase { try split(name).0 }
}
