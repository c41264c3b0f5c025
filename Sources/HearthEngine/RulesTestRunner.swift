import Foundation
import HearthCore
import HearthRules
import Logging

/// Runs rules test files (docs/rules.md, Rules tests) through the engine itself: each case gets a fresh
/// temporary store with its fixtures loaded and performs its operation through `Database`, as a real request
/// would, with the rules decided by the same code. `hearth rules test` and the Swift tests both use it.
public struct RulesTestRunner: Sendable {
    /// The outcome of one case.
    public struct CaseResult: Sendable {
        /// The case's name.
        public var name: String
        /// True when the decision matched the expectation.
        public var passed: Bool
        /// What happened: `allow`, `deny`, or an error that is neither.
        public var outcome: String
        /// Why: the deciding rule of a denial, or the error.
        public var detail: String?
    }

    /// The outcome of one file.
    public struct FileReport: Sendable {
        /// The test file.
        public var file: String
        /// Why the file (or its rules) did not load; its cases then did not run.
        public var loadError: String?
        /// One result per case, in order.
        public var results: [CaseResult]

        /// The lines to print: one per failing case, or the load error.
        public var failureLines: [String] {
            if let loadError { return ["\(file): \(loadError)"] }
            return results.filter { !$0.passed }.map { r in
                "\(file): FAIL \(r.name): expected \(r.outcome == "allow" ? "deny" : "allow"), got \(r.outcome)"
                    + (r.detail.map { " (\($0))" } ?? "")
            }
        }
    }

    /// Where the rules path is looked up after the test file's folder.
    public var workingDirectory: String
    /// Where the per-case stores are made.
    public var temporaryDirectory: String

    /// Makes a runner.
    public init(workingDirectory: String = FileManager.default.currentDirectoryPath,
                temporaryDirectory: String = NSTemporaryDirectory()) {
        self.workingDirectory = workingDirectory
        self.temporaryDirectory = temporaryDirectory
    }

    /// Runs every file; the summary line is `N passed, N failed`.
    public func run(files: [String]) async -> [FileReport] {
        var out: [FileReport] = []
        for file in files { out.append(await run(file: file)) }
        return out
    }

    /// `N passed, N failed` over reports (a file that did not load counts as one failure).
    public static func summary(_ reports: [FileReport]) -> (passed: Int, failed: Int) {
        var passed = 0, failed = 0
        for report in reports {
            if report.loadError != nil { failed += 1 }
            for r in report.results { if r.passed { passed += 1 } else { failed += 1 } }
        }
        return (passed, failed)
    }

    /// Runs one file.
    public func run(file: String) async -> FileReport {
        let test: RulesTestFile
        let program: RulesProgram
        do {
            test = try RulesTestFile(path: file, workingDirectory: workingDirectory)
            program = try RulesInForce.compile(file: test.rulesPath)
        } catch {
            return FileReport(file: file, loadError: "\(error)", results: [])
        }
        var results: [CaseResult] = []
        for testCase in test.cases {
            results.append(await run(testCase, fixtures: testCase.fixtures ?? test.fixtures,
                                     files: testCase.files ?? test.files, program: program))
        }
        return FileReport(file: file, loadError: nil, results: results)
    }

    func run(_ testCase: RulesTestFile.Case, fixtures: [(path: DocumentPath, data: JSON)],
             files: [(path: FilePath, object: RulesTestFile.StoredObjectFixture)], program: RulesProgram) async -> CaseResult {
        let expected = testCase.expectAllow ? "allow" : "deny"
        func result(_ outcome: String, _ detail: String?) -> CaseResult {
            CaseResult(name: testCase.name, passed: outcome == expected, outcome: outcome, detail: detail)
        }
        let folder = (temporaryDirectory as NSString).appendingPathComponent("hearth-rules-test-" + makeAutoID())
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let storage: any DocumentStorage
        do {
            var configuration = StorageConfiguration(dataDirectory: folder)
            configuration.readers = 1
            storage = try StorageBackend.open(configuration, logger: Logger(label: "hearth.rules-test") { _ in SwiftLogNoOpLogHandler() })
                .documents
        } catch {
            return result("error", "cannot open a temporary store: \(error)")
        }
        defer { storage.close() }
        let database = Database(storage: storage)
        database.rules.dev = true
        do {
            if !fixtures.isEmpty {
                // `$timestampRelative` in a fixture counts from the moment the fixtures are stored, just before the case.
                _ = try await database.commit(transaction: nil, as: .admin) { commitTime in
                    var writes: [Write] = []
                    for (path, data) in fixtures {
                        writes.append(try Write(kind: "set", path: path, data: Self.resolveRelativeTimestamps(data, commitTime)))
                    }
                    return writes
                }
            }
            if testCase.file != nil {
                for (path, object) in files {
                    _ = try await database.performFile(.put(Self.upload(path, object)), as: .admin)
                }
            }
        } catch {
            return result("error", "fixtures do not load: \(error)")
        }
        database.rules.install(program)
        let identity: Identity = testCase.auth.map {
            .user(uid: $0.uid, token: RulesAuth.defaultClaims(uid: $0.uid, claims: $0.claims))
        } ?? .unauthenticated
        do {
            try await perform(testCase, fixtures: fixtures, on: database, as: identity)
            return result("allow", nil)
        } catch let error as HearthError where error.code == .permissionDenied {
            return result("deny", error.message)
        } catch {
            return result("error", "\(error)")
        }
    }

    /// Performs the case's operation through the engine; throws permission-denied when the rules deny it.
    func perform(_ testCase: RulesTestFile.Case, fixtures: [(path: DocumentPath, data: JSON)], on database: Database,
                 as identity: Identity) async throws {
        if let file = testCase.file {
            try await performStorage(testCase, file: file, on: database, as: identity)
            return
        }
        let segments = try parsePathSegments(testCase.path)
        switch testCase.op {
        case "get":
            _ = try await database.perform(.get(DocumentPath(uncheckedSegments: segments), transaction: nil), as: identity)
        case "list":
            var pairs: [(String, JSON)] = [("from", .string(testCase.path))]
            if case .object(let given)? = testCase.query {
                pairs = given.contains { $0.0 == "from" } ? given : pairs + given
            } else if let query = testCase.query, query != .null {
                throw HearthError.invalidArgument("'query' must be an object")
            }
            try database.authorizeQuery(Query(json: .object(pairs)), identity)
        default:
            let path = DocumentPath(uncheckedSegments: segments)
            let storedKeys = Set(fixtures.first { $0.path == path }.flatMap { fixture -> [String]? in
                guard case .object(let pairs) = fixture.data else { return nil }
                return pairs.map(\.0)
            } ?? [])
            let op = testCase.op
            let data = testCase.data ?? .object([])
            // Checks the data once before the commit: inside it, only the timestamps change.
            _ = try Self.write(op, path: path, data: data, storedKeys: storedKeys, at: .now())
            _ = try await database.commit(transaction: nil, as: identity) { commitTime in
                [try Self.write(op, path: path, data: data, storedKeys: storedKeys, at: commitTime)]
            }
        }
    }

    /// Performs a storage case's operation through the engine, as a request of `/v1/files` would; a create
    /// or update puts `object`'s size in zeros.
    func performStorage(_ testCase: RulesTestFile.Case, file: String, on database: Database, as identity: Identity) async throws {
        switch testCase.op {
        case "list":
            _ = try await database.performFile(.list(FileListRequest(prefix: file, delimiter: "/")), as: identity)
        case "get":
            _ = try await database.performFile(.get(try FilePath(file), token: nil), as: identity)
        case "delete":
            _ = try await database.performFile(.delete(try FilePath(file), ifMatch: nil), as: identity)
        default:
            let path = try FilePath(file)
            let exists = try await database.storage.read { try $0.file(at: path) } != nil
            guard exists == (testCase.op == "update") else {
                throw HearthError.invalidArgument(exists ? "'\(file)' is in the case's files, so a put is an update, not a create"
                                                  : "'\(file)' is not in the case's files, so a put is a create, not an update")
            }
            let object = testCase.object ?? RulesTestFile.StoredObjectFixture(size: 0, contentType: FileUpload.defaultContentType, metadata: [:])
            _ = try await database.performFile(.put(Self.upload(path, object)), as: identity)
        }
    }

    /// A put of `object`'s size in zeros.
    static func upload(_ path: FilePath, _ object: RulesTestFile.StoredObjectFixture) -> FileUpload {
        let remaining = Remaining(object.size)
        let chunks = ByteChunks {
            let n = remaining.take(64 * 1_024)
            return n > 0 ? [UInt8](repeating: 0, count: n) : nil
        }
        return FileUpload(path: path, contentType: object.contentType, metadata: object.metadata, bytes: chunks,
                          maxSize: RulesTestFile.maxObjectSize)
    }

    /// The write that leaves `data` stored at `path` (`request.resource.data`), with `$timestampRelative`
    /// resolved against the commit time, which is `request.time`.
    static func write(_ op: String, path: DocumentPath, data: JSON, storedKeys: Set<String>,
                      at time: Timestamp) throws(HearthError) -> Write {
        if op == "delete" { return Write(kind: .delete, path: path) }
        var write = try Write(kind: "set", path: path, data: resolveRelativeTimestamps(data, time))
        write.precondition = nil
        switch op {
        case "create":
            write.kind = .create
        default:
            // Every field given, and every stored field not given (so it is removed): the whole document.
            let keys = storedKeys.union(write.fields.keys).union(write.transforms.map { $0.field.segments[0] })
            write.kind = .update(mask: keys.sorted().map { FieldPath(uncheckedSegments: [$0]) })
        }
        return write
    }

    /// Replaces `{"$timestampRelative": seconds}` with the timestamp that many seconds from `time`.
    static func resolveRelativeTimestamps(_ json: JSON, _ time: Timestamp) throws(HearthError) -> JSON {
        switch json {
        case .object(let pairs):
            if pairs.count == 1, pairs[0].0 == "$timestampRelative" {
                let seconds: Double
                switch pairs[0].1 {
                case .int(let i): seconds = Double(i)
                case .double(let d) where d.isFinite: seconds = d
                default: throw .invalidArgument("$timestampRelative takes a number of seconds")
                }
                let micros = time.microseconds + Int64((seconds * 1_000_000).rounded())
                return .object([("$timestamp", .string(Timestamp(microseconds: micros).rfc3339))])
            }
            var out: [(String, JSON)] = []
            for (k, v) in pairs { out.append((k, try resolveRelativeTimestamps(v, time))) }
            return .object(out)
        case .array(let items):
            var out: [JSON] = []
            for item in items { out.append(try resolveRelativeTimestamps(item, time)) }
            return .array(out)
        default:
            return json
        }
    }
}

/// How many bytes a test's put has left to produce; used by the one task reading the chunks.
private final class Remaining: @unchecked Sendable {
    var count: Int64
    init(_ count: Int64) { self.count = count }

    func take(_ most: Int) -> Int {
        let n = Int(min(Int64(most), count))
        count -= Int64(n)
        return n
    }
}
