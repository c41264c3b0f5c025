import Crypto
import Foundation
import HearthAuth
import HearthCore
import NIOCore

/// Loads fixture files into a database and exports a database as one. `hearth fixtures`, `hearth serve
/// --fixtures` and `--demo`, and HearthTesting all load data through this type.
public struct FixtureLoader: Sendable {
    /// What a load did.
    public struct Report: Sendable, Equatable {
        /// Documents created or replaced.
        public var written: Int
        /// Documents already stored with the fixture's content, left alone.
        public var unchanged: Int
        /// Accounts created.
        public var usersCreated = 0
        /// Accounts that existed already (their claims are set to the fixture's; passwords are kept).
        public var usersExisting = 0
        /// Objects stored or replaced.
        public var filesWritten = 0
        /// Objects already stored with the fixture's bytes and attributes, left alone.
        public var filesUnchanged = 0

        /// Makes a report.
        public init(written: Int, unchanged: Int, usersCreated: Int = 0, usersExisting: Int = 0,
                    filesWritten: Int = 0, filesUnchanged: Int = 0) {
            self.written = written
            self.unchanged = unchanged
            self.usersCreated = usersCreated
            self.usersExisting = usersExisting
            self.filesWritten = filesWritten
            self.filesUnchanged = filesUnchanged
        }

        /// The report as `POST /v1/admin/fixtures` answers it.
        public var json: JSON {
            .object([("written", .int(Int64(written))), ("unchanged", .int(Int64(unchanged))),
                     ("usersCreated", .int(Int64(usersCreated))), ("usersExisting", .int(Int64(usersExisting))),
                     ("filesWritten", .int(Int64(filesWritten))), ("filesUnchanged", .int(Int64(filesUnchanged)))])
        }

        /// Reads a report as `json` writes it.
        public init(json: JSON) throws(HearthError) {
            func count(_ key: String) throws(HearthError) -> Int {
                guard case .int(let n)? = json[key], n >= 0 else { throw .internal("the fixture report has no count '\(key)'") }
                return Int(n)
            }
            self.init(written: try count("written"), unchanged: try count("unchanged"),
                      usersCreated: try count("usersCreated"), usersExisting: try count("usersExisting"),
                      filesWritten: try count("filesWritten"), filesUnchanged: try count("filesUnchanged"))
        }

        /// Adds another load's counts.
        public static func + (a: Report, b: Report) -> Report {
            Report(written: a.written + b.written, unchanged: a.unchanged + b.unchanged,
                   usersCreated: a.usersCreated + b.usersCreated, usersExisting: a.usersExisting + b.usersExisting,
                   filesWritten: a.filesWritten + b.filesWritten, filesUnchanged: a.filesUnchanged + b.filesUnchanged)
        }

        /// The report as the command line prints it; objects are named only when the dataset has some.
        public func summary(files: Bool) -> String {
            "\(written) documents written, \(unchanged) unchanged; "
                + (files ? "\(filesWritten) files written, \(filesUnchanged) unchanged; " : "")
                + "\(usersCreated) users created, \(usersExisting) existing"
        }
    }

    /// The database loaded into or exported from.
    public let database: Database
    /// The account service the fixture's users go to; nil loads documents only.
    public let auth: AuthService?

    /// Makes a loader over a database and, for the fixture's users, an account service.
    public init(database: Database, auth: AuthService? = nil) {
        self.database = database
        self.auth = auth
    }

    /// Loads the fixture's documents, its objects and (when an account service is given) its users.
    @discardableResult
    public func load(_ fixture: FixtureFile) async throws -> Report {
        var report = try await loadDocuments(fixture)
        (report.filesWritten, report.filesUnchanged) = try await loadFiles(fixture)
        (report.usersCreated, report.usersExisting) = try await loadUsers(fixture)
        return report
    }

    /// Stores the fixture's objects as the admin, through the same put as any other. Idempotent: an object
    /// already stored with the same bytes, content type and metadata is not written again.
    public func loadFiles(_ fixture: FixtureFile) async throws -> (written: Int, unchanged: Int) {
        var written = 0, unchanged = 0
        for file in fixture.files {
            let (bytes, sha256) = try Self.source(of: file, in: fixture.directory)
            let stored = try await database.storage.read { try $0.file(at: file.path) }
            if let stored, file.isStored(as: (stored.sha256, stored.contentType, stored.metadata), sha256: sha256) {
                unchanged += 1
                continue
            }
            let upload = FileUpload(path: file.path, contentType: file.contentType, metadata: file.metadata,
                                    bytes: ByteChunks(bytes), maxSize: Int64(bytes.count), sha256: sha256)
            _ = try await database.performFile(.put(upload), as: .admin)
            written += 1
        }
        return (written, unchanged)
    }

    /// The bytes of a fixture's object, from its source beside the fixture file, and their SHA-256.
    public static func source(of file: FixtureFile.File, in directory: String?) throws -> (bytes: [UInt8], sha256: [UInt8]) {
        let path = (directory ?? ".") + "/" + file.source
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HearthError.invalidArgument("files['\(file.path.name)'].source: cannot read \(path)")
        }
        return (Array(data), Array(SHA256.hash(data: data)))
    }

    /// Creates the fixture's accounts with their passwords, verified emails and claims. Idempotent: an
    /// account that exists keeps its password and gets the fixture's claims; an email held by another uid
    /// is refused.
    public func loadUsers(_ fixture: FixtureFile) async throws -> (created: Int, existing: Int) {
        guard let auth else { return (0, 0) }
        var created = 0, existing = 0
        for user in fixture.users {
            if let current = try await Self.account(auth, uid: user.uid) {
                guard current.emailNormalized == user.email.lowercased() else {
                    throw HearthError.alreadyExists(
                        "fixture user \(user.uid) has email \(user.email), but the stored account has \(current.email ?? "none")")
                }
                if current.claims != user.claims { _ = try await auth.setClaims(uid: user.uid, claims: user.claims) }
                existing += 1
            } else {
                let new = AuthService.NewUser(uid: user.uid, email: user.email, password: user.password,
                                              emailVerified: true, claims: user.claims)
                if let failure = await Self.create(auth, new) {
                    throw HearthError(failure.code, "fixture user \(user.uid): \(failure.message)")
                }
                created += 1
            }
        }
        return (created, existing)
    }

    /// The account with a uid, or nil when there is none.
    static func account(_ auth: AuthService, uid: String) async throws -> UserRecord? {
        do {
            return try await auth.user(uid: uid)
        } catch {
            let failure: HearthError = error
            if failure.code != .notFound { throw failure }
        }
        return nil
    }

    /// Creates an account; answers why it could not be made, if it could not.
    static func create(_ auth: AuthService, _ new: AuthService.NewUser) async -> HearthError? {
        do {
            _ = try await auth.createUser(new)
            return nil
        } catch {
            let failure: HearthError = error
            return failure
        }
    }

    /// Deletes every account, then creates the fixture's: sign-ups, sessions and password changes made by a
    /// test are gone.
    public func resetUsers(to fixture: FixtureFile) async throws {
        guard let auth else { return }
        var uids: [String] = []
        var token: String?
        repeat {
            let page = try await auth.listUsers(pageSize: AuthLimits.maxUserPageSize, pageToken: token)
            uids += page.users.map(\.uid)
            token = page.nextPageToken
        } while token != nil
        for uid in uids { try await auth.deleteUser(uid: uid) }
        _ = try await loadUsers(fixture)
    }

    /// Stores the fixture's documents as the admin. Idempotent: a document already stored with the same
    /// fields is not written again, so loading at every start neither bumps update times nor fills the
    /// change log. Accounts are not created here: they live in the account storage (see the callers).
    @discardableResult
    public func loadDocuments(_ fixture: FixtureFile) async throws -> Report {
        var writes: [Write] = []
        for (path, data) in fixture.documents { writes.append(try Write(kind: "set", path: path, data: data)) }
        let paths = writes.map(\.path)
        let stored = try await database.storage.read { context in
            try paths.map { try context.document(at: $0)?.decoded().fields }
        }
        var needed: [Write] = []
        for (write, current) in zip(writes, stored) where !(write.transforms.isEmpty && current == write.fields) {
            needed.append(write)
        }
        // Chunks keep each commit within Firestore's write limit; a dataset is loaded before anyone reads it.
        var start = 0
        while start < needed.count {
            let chunk = Array(needed[start..<min(start + Limits.maxWritesPerCommit, needed.count)])
            _ = try await database.commit(CommitRequest(writes: chunk), as: .admin)
            start += chunk.count
        }
        return Report(written: needed.count, unchanged: writes.count - needed.count)
    }

    /// Makes the stored data exactly the fixture's: deletes every other document and object, then loads the
    /// fixture's (those already equal stay untouched), and makes the accounts anew. Tests call it between cases.
    @discardableResult
    public func reset(to fixture: FixtureFile) async throws -> Report {
        let keepFiles = Set(fixture.files.map(\.path))
        for file in try await storedFiles() where !keepFiles.contains(file.path) {
            _ = try await database.performFile(.delete(file.path, ifMatch: nil), as: .admin)
        }
        let keep = Set(fixture.documents.map(\.path))
        let stale = try await export().documents.map(\.path).filter { !keep.contains($0) }
        var start = 0
        while start < stale.count {
            let chunk = stale[start..<min(start + Limits.maxWritesPerCommit, stale.count)]
            _ = try await database.commit(CommitRequest(writes: chunk.map { Write(kind: .delete, path: $0) }), as: .admin)
            start += chunk.count
        }
        var report = try await loadDocuments(fixture)
        (report.filesWritten, report.filesUnchanged) = try await loadFiles(fixture)
        try await resetUsers(to: fixture)
        report.usersCreated = fixture.users.count
        return report
    }

    /// Every stored document, in path order, as a fixture (with the accounts given, which live elsewhere).
    public func export(users: [FixtureFile.User] = []) async throws -> FixtureFile {
        var documents: [(path: DocumentPath, data: JSON)] = []
        var after: String?
        let page = 1_000
        while true {
            let cursor = after
            let batch = try await database.storage.read { try $0.allDocuments(after: cursor, limit: page) }
            for doc in batch { documents.append((doc.path, try JSON.parse(doc.data))) }
            guard batch.count == page, let last = batch.last else { break }
            after = last.path.description
        }
        return FixtureFile(users: users, documents: documents)
    }

    /// Every stored object's metadata, in name order.
    public func storedFiles() async throws -> [StoredFile] {
        var files: [StoredFile] = []
        var after: [UInt8]?
        let page = 1_000
        while true {
            let start = after
            let batch = try await database.storage.read { try $0.files(prefix: "", from: start, inclusive: false, limit: page) }
            files += batch
            guard batch.count == page, let last = batch.last else { return files }
            after = Array(last.path.name.utf8)
        }
    }

    /// Writes every stored object's bytes under `folder/files/` (at its own name there, or at `.sha256/` and
    /// its digest where its name is also the folder of other objects) and answers the entries that name them, sources
    /// relative to `folder`: what `hearth fixtures export` writes beside the JSON.
    public func exportFiles(into folder: String) async throws -> [FixtureFile.File] {
        let stored = try await storedFiles()
        // `a` and `a/b` may both be objects, but `files/a` cannot be both a file and a folder.
        let folders = Set(stored.flatMap { file -> [String] in
            let segments = file.path.name.split(separator: "/")
            return (1..<segments.count).map { segments[..<$0].joined(separator: "/") }
        })
        var entries: [FixtureFile.File] = []
        for file in stored {
            let source = "files/" + (folders.contains(file.path.name) ? ".sha256/" + file.sha256Hex : file.path.name)
            let target = folder + "/" + source
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            guard case .read(let read) = try await database.performFile(.get(file.path, token: nil), as: .admin) else {
                preconditionFailure("a get comes to a read")
            }
            guard FileManager.default.createFile(atPath: target, contents: nil),
                  let handle = FileHandle(forWritingAtPath: target) else {
                throw HearthError.invalidArgument("cannot write \(target)")
            }
            defer { try? handle.close() }
            for try await chunk in read.bytes() { try handle.write(contentsOf: Data(chunk.readableBytesView)) }
            entries.append(FixtureFile.File(path: file.path, source: source, contentType: read.file.contentType,
                                            metadata: read.file.metadata))
        }
        return entries
    }
}
