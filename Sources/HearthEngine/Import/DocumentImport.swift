import Foundation
import HearthCore

/// Imports the documents of a file (NDJSON as `hearth export` writes it, or a fixture file) into a database, in
/// large transactions, with bounded memory, resumably.
///
/// The file is read as a stream, a batch of documents at a time; each batch is stored in one transaction
/// with the import's progress (`ImportProgress`), while the next batch is read. Whatever stops an import (an
/// error, Ctrl-C, `kill -9`), the database holds whole batches and a record of where the next one starts,
/// and running the import again continues there. A malformed document stops the import before its batch is
/// written, naming its line. Each document is stored as a `set` would store it through the API, so an import
/// run twice leaves documents that are already equal untouched.
public struct DocumentImport: Sendable {
    /// Bounds on what an import holds at once: two batches (one read while the other is written) and the
    /// writer's page cache.
    public struct Limits: Sendable {
        /// Documents per transaction. Each transaction rewrites the index pages its rows land on, and rows of
        /// values spread over the index (random numbers, names) land on most of them whatever the batch's size,
        /// so larger batches write less per document (`bench/README.md`).
        public var documentsPerBatch = 10_000
        /// Bytes of the file per transaction, whatever the number of documents.
        public var bytesPerBatch = 8 << 20
        /// Longest one document may be in the file (more than the 1 MiB a document may store, for its JSON).
        public var maxDocumentBytes = 16 << 20
        /// The defaults.
        public init() {}

        /// The page cache an import's store gives its writer (`Store.Configuration.writerPageCache`): a batch's
        /// index pages stay in memory until its commit instead of being read again for every row.
        public static let writerPageCache = 64 << 20
    }

    /// The file formats an import reads.
    public enum Format: String, Sendable, CaseIterable {
        /// One document per line: `{"path": "...", "data": {...}}`.
        case ndjson
        /// A fixture file: `{"users": [...], "documents": {"path": {...}}}`.
        case fixture

        /// The format of a file, from its name (`.ndjson`, `.jsonl`) or else its first line: an object with a
        /// `path` is a document of NDJSON; anything else is read as a fixture file.
        static func detect(path: String, head: [UInt8]) -> Format {
            let name = path.lowercased()
            if name.hasSuffix(".ndjson") || name.hasSuffix(".jsonl") { return .ndjson }
            let firstLine = head.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: true).first ?? []
            if case .object? = try? JSON.parse(firstLine), JSON.objectMember("path", in: Array(firstLine)) != nil { return .ndjson }
            return .fixture
        }
    }

    /// Where an import is.
    public struct Status: Sendable {
        /// Documents imported so far (by earlier runs too).
        public var documents: Int
        /// Documents this run imported.
        public var documentsThisRun: Int
        /// The line the next batch starts on.
        public var line: Int
        /// The byte offset the next batch starts at, and the file's size.
        public var offset: Int64
        public var size: Int64
        /// Time this run has taken.
        public var elapsed: Duration

        /// Documents per second this run.
        public var rate: Double {
            let seconds = elapsed.inSeconds
            return seconds > 0 ? Double(documentsThisRun) / seconds : 0
        }
    }

    /// How an import run ended.
    public struct Outcome: Sendable {
        /// Where it ended.
        public var status: Status
        /// How it ended: the file is imported (now or by an earlier run), or the run stopped as asked.
        public var finished: Bool
        /// True when an earlier run had imported the whole file already, and this one did nothing.
        public var alreadyFinished: Bool
        /// The line this run started from (1 unless it resumed).
        public var startLine: Int
        /// Accounts in a fixture file, which an import leaves out.
        public var accounts: Int
    }

    /// The database imported into.
    public let database: Database
    /// Bounds on what an import holds.
    public let limits: Limits

    /// Makes an importer into a database.
    public init(database: Database, limits: Limits = .init()) {
        self.database = database
        self.limits = limits
    }

    /// Imports `path` (in `format`, or as detected), continuing where an earlier run stopped unless
    /// `restart`. `progress` is told where the run starts, then after every batch; `stopRequested` is asked before each batch is written
    /// (true: the run ends there, resumable); `afterBatch` is told how many batches this run has written.
    public func run(path: String, format: Format? = nil, restart: Bool = false,
                    progress: (Status) -> Void = { _ in }, stopRequested: () -> Bool = { false },
                    afterBatch: (Int) -> Void = { _ in }) async throws -> Outcome {
        let source = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        let probe = try ImportFile(path: path, maxDocumentBytes: limits.maxDocumentBytes)
        let head = probe.bytes(at: 0..<Int64(ImportProgress.sampleBytes))
        let format = format ?? Format.detect(path: path, head: head)
        if restart { try await database.storage.write { context in try context.forgetImport(source: source) } }
        let record = try await database.storage.read { try $0.importProgress(source: source) }
        let start = ContinuousClock.now
        var status = Status(documents: record?.documents ?? 0, documentsThisRun: 0, line: record?.line ?? 1,
                            offset: record?.offset ?? 0, size: probe.size, elapsed: .zero)
        if let record {
            try Self.check(record, head: head, file: probe, path: path)
            if record.finished {
                return Outcome(status: status, finished: true, alreadyFinished: true, startLine: record.line, accounts: 0)
            }
        }
        progress(status)
        let file = try ImportFile(path: path, offset: status.offset, line: status.line, maxDocumentBytes: limits.maxDocumentBytes)
        let reader: any ImportReader = format == .ndjson ? NDJSONReader(file) : FixtureStreamReader(file, resuming: status.offset > 0)
        let startLine = status.line
        let storage = database.storage
        var finished = false
        var batches = 0
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var inFlight: (count: Int, record: ImportProgress)?
                /// Waits for the batch being written, then reports it.
                func settle() async throws {
                    guard let (count, record) = inFlight else { return }
                    inFlight = nil
                    try await group.next()
                    status.documents = record.documents
                    status.documentsThisRun += count
                    status.line = record.line
                    status.offset = record.offset
                    status.elapsed = ContinuousClock.now - start
                    batches += 1
                    progress(status)
                    afterBatch(batches)
                }
                while true {
                    let batch: [ImportItem], atEnd: Bool
                    do {
                        (batch, atEnd) = try readBatch(reader)
                    } catch {
                        try await settle()
                        throw error
                    }
                    try await settle()
                    if stopRequested() { return }
                    let last = batch.last
                    let end = last?.end ?? file.offset
                    let record = ImportProgress(
                        source: source, head: Array(head.prefix(Int(min(end, Int64(head.count))))), offset: end,
                        line: last?.endLine ?? file.line,
                        before: file.bytes(at: max(0, end - Int64(ImportProgress.sampleBytes))..<end),
                        documents: status.documents + batch.count, finished: atEnd)
                    let writes = batch.map(\.write)
                    // Encoded and indexed here, beside the writer rather than on it.
                    let prepared = writes.map { storage.prepare($0.fields, at: $0.path) }
                    let span = Self.pathSpan(of: writes)
                    let lines = (batch.first?.line ?? status.line)...(last?.line ?? status.line)
                    group.addTask { [database, path] in
                        do {
                            try await database.storage.write { context in
                                // A file in path order (as `hearth export` writes it) into a folder without those
                                // documents: one look at the path index instead of a read per document.
                                let reader = context.reader
                                let noneStored = try span.map { try !reader.anyDocument(from: $0.lower, through: $0.upper) } ?? false
                                _ = try Database.apply(writes, prepared: prepared, commitTime: context.nextCommitTime(), in: context,
                                                       noneStored: noneStored)
                                try context.record(record)
                            }
                        } catch let error as HearthError {
                            throw HearthError(error.code, "\(path): a document of lines \(lines.lowerBound)-\(lines.upperBound): \(error.message)")
                        }
                    }
                    inFlight = (batch.count, record)
                    if record.finished {
                        try await settle()
                        finished = true
                        return
                    }
                }
            }
        } catch let error as HearthError {
            throw Self.stopped(error, at: status)
        }
        return Outcome(status: status, finished: finished, alreadyFinished: false, startLine: startLine, accounts: reader.accounts)
    }

    /// The first and last of the writes' document paths as text, in UTF-8 byte order (the store's), or nil
    /// when there are none.
    static func pathSpan(of writes: [Write]) -> (lower: String, upper: String)? {
        guard let first = writes.first?.path.description else { return nil }
        var lower = first, upper = first
        for write in writes.dropFirst() {
            let text = write.path.description
            if utf8Less(text, lower) { lower = text } else if utf8Less(upper, text) { upper = text }
        }
        return (lower, upper)
    }

    /// The next batch: documents up to the limits, and whether the file ends with them.
    private func readBatch(_ reader: any ImportReader) throws(HearthError) -> ([ImportItem], atEnd: Bool) {
        var batch: [ImportItem] = []
        let from = reader.file.offset
        while batch.count < limits.documentsPerBatch, reader.file.offset - from < Int64(limits.bytesPerBatch) {
            guard let item = try reader.next() else { return (batch, true) }
            batch.append(item)
        }
        return (batch, false)
    }

    /// An error that stopped the import, with where it stopped: every batch before it is written.
    static func stopped(_ error: HearthError, at status: Status) -> HearthError {
        HearthError(error.code, "\(error.message); nothing from line \(status.line) on is written (\(status.documents) documents "
                    + "before it are imported); importing the file again continues from line \(status.line)")
    }

    /// Refuses to resume a file that changed before the point where the import stopped: its head, or the bytes
    /// just before that point, differ from what the record kept.
    static func check(_ record: ImportProgress, head: [UInt8], file: ImportFile, path: String) throws(HearthError) {
        let before = file.bytes(at: max(0, record.offset - Int64(record.before.count))..<record.offset)
        guard head.starts(with: record.head), file.size >= record.offset, before == record.before else {
            throw .failedPrecondition("\(path) changed before line \(record.line), where its import into this data folder stopped; "
                                      + "pass --restart to import it from the beginning")
        }
    }
}
