import ArgumentParser
import Foundation
import HearthCore
import HearthEngine
import HearthStore
import Logging
import Synchronization

/// `hearth import FILE`: stores the documents of an NDJSON file (as `hearth export` writes it) or a fixture file
/// in a data folder, in large transactions, resumably.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import documents from an NDJSON file (as `hearth export` writes it) or a fixture file.",
        discussion: """
            NDJSON: one document a line, {"path": "users/alice", "data": {...}} (id, createTime and updateTime may be \
            there and are left aside). A fixture file's documents are imported; its accounts are not (`hearth fixtures \
            load` creates them). Each document is stored as a `set` would store it, in transactions of --batch documents, \
            each with a record of how far the import got: after an interruption (Ctrl-C, kill -9, a malformed line), \
            the same command continues where it stopped. No server may run on the data folder meanwhile. Progress goes \
            to standard error.
            """)

    @Argument(help: "The file to import.") var file: String
    @Option(help: "Data folder (default ./hearth-data).") var data: String?
    @Option(help: "ndjson or fixture (default: .ndjson and .jsonl files, and files whose first line is a document, are NDJSON).")
    var format: String?
    @Option(help: "Documents per transaction (default 10000); memory grows with it.") var batch: Int?
    @Flag(help: "Import the file from its beginning, even if an earlier import of it stopped part way or finished.")
    var restart = false
    /// For tests of interruptions, `N:KILL` or `N:INT`: the process sends itself SIGKILL (as `kill -9` would) or
    /// SIGINT (as Ctrl-C would) once it has written N batches.
    @Option(help: .hidden) var raiseAfterBatches: String?

    func run() async throws {
        let folder = DataFolder.path(data)
        var limits = DocumentImport.Limits()
        if let batch {
            guard batch >= 1 else { throw ValidationError("--batch must be at least 1, got \(batch)") }
            limits.documentsPerBatch = batch
        }
        let chosen: DocumentImport.Format?
        if let format {
            guard let f = DocumentImport.Format(rawValue: format.lowercased()) else {
                throw ValidationError("--format must be ndjson or fixture, got \(format)")
            }
            chosen = f
        } else {
            chosen = nil
        }
        let raise = try raiseAfterBatches.map(Self.parseRaise)
        // Before the data folder is created or locked: a missing file changes nothing.
        guard FileManager.default.isReadableFile(atPath: file) else {
            fail(FileManager.default.fileExists(atPath: file) ? "cannot read \(file)" : "no such file: \(file)")
        }
        var configuration = Store.Configuration(dataDirectory: folder)
        configuration.usesServedIndexDefinitions = true
        configuration.dataFolderOwner = "hearth import"
        configuration.writerPageCache = DocumentImport.Limits.writerPageCache
        let store: Store
        do {
            store = try Store(configuration: configuration, logger: Logger(label: "hearth.import") { _ in SwiftLogNoOpLogHandler() })
        } catch let inUse as DataFolderInUse {
            let who = inUse.holderName ?? "another process"
            let pid = inUse.holder.map { " (pid \($0))" } ?? ""
            fail("the data folder \(folder) is in use by \(who)\(pid); stop it"
                 + (inUse.holder.map { " (kill \($0))" } ?? "") + ", then run this import again")
        }
        defer { store.close() }
        let interrupted = Interruption()
        let reporter = ProgressReporter(file: file)
        do {
            let outcome = try await DocumentImport(database: Database(storage: SQLiteDocumentStorage(store)), limits: limits).run(
                path: file, format: chosen, restart: restart,
                progress: { reporter.report($0) },
                stopRequested: { interrupted.requested },
                afterBatch: { batches in if let raise, batches == raise.batches { kill(getpid(), raise.signal) } })
            let status = outcome.status
            if outcome.alreadyFinished {
                note("\(file) was imported into \(folder) already (\(status.documents) documents); pass --restart to import it again")
                return
            }
            if !outcome.finished {
                note("interrupted: \(status.documents) documents are imported, the lines before line \(status.line); "
                     + "run the same command again to continue from line \(status.line)")
                throw ExitCode(130)
            }
            let seconds = status.elapsed.inSeconds
            note("done: \(status.documents) documents from \(file) are in \(folder) (\(status.documentsThisRun) this run in "
                 + String(format: "%.1f s, %.0f/s", seconds, status.rate)
                 + (outcome.startLine > 1 ? ", continued from line \(outcome.startLine))" : ")"))
            if outcome.accounts > 0 {
                note("the file's \(outcome.accounts) accounts were not imported: `hearth fixtures load \(file)` creates them")
            }
        } catch let error as HearthError {
            store.close()  // `fail` exits without running the `defer` above
            fail(error.message)
        }
    }

    static func parseRaise(_ text: String) throws -> (batches: Int, signal: Int32) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let n = Int(parts[0]), let signal = ["KILL": SIGKILL, "INT": SIGINT][String(parts[1])] else {
            throw ValidationError("--raise-after-batches takes N:KILL or N:INT")
        }
        return (n, signal)
    }

    /// Prints a failure and ends with status 1.
    func fail(_ message: String) -> Never {
        note(message)
        Foundation.exit(1)
    }
}

/// A line on standard error, where the import's progress goes.
func note(_ message: String) {
    FileHandle.standardError.write(Data("hearth import: \(message)\n".utf8))
}

/// Ctrl-C (SIGINT) and SIGTERM while an import runs: the batch being written is finished, and the import
/// stops before the next.
final class Interruption: @unchecked Sendable {
    private let flag = Atomic<Bool>(false)
    private var sources: [any DispatchSourceSignal] = []

    init() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { [weak self] in self?.flag.store(true, ordering: .relaxed) }
            source.resume()
            sources.append(source)
        }
    }

    var requested: Bool { flag.load(ordering: .relaxed) }
}

/// Prints where a run starts, then the import's progress after its first batch and at most once per `interval`.
final class ProgressReporter {
    static let interval: Duration = .seconds(1)
    let file: String
    private var last: ContinuousClock.Instant?

    init(file: String) { self.file = file }

    func report(_ status: DocumentImport.Status) {
        let now = ContinuousClock.now
        if status.documentsThisRun == 0 {
            if status.line > 1 { note("resuming \(file) at line \(status.line) (\(status.documents) documents imported before)") }
            return
        }
        if let last, now - last < Self.interval { return }
        last = now
        let percent = status.size > 0 ? Int(Double(status.offset) * 100 / Double(status.size)) : 100
        note("\(status.documents) documents (\(Int(status.rate.rounded()))/s), line \(status.line), \(percent)% of \(file)")
    }
}
