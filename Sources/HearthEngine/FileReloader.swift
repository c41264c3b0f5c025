import Foundation
import HearthRules
import Logging
import ServiceLifecycle

/// Keeps what the engine loaded from a file (the rules, the functions) in step with the file: reloads it
/// when its modification time or size changes (polled) and on SIGHUP (`hangUp`, called by `HangUpReloads`).
/// A new file that does not load leaves the old one in force, and the log says why.
public struct FileReloader: Service {
    /// Polling settings.
    public struct Configuration: Sendable {
        /// Time between two looks at the file.
        public var pollInterval: Duration = .seconds(1)
        /// Makes the default configuration.
        public init() {}
    }

    let path: String
    /// What the file holds, for the log ("rules", "functions").
    let what: String
    let load: @Sendable (String) throws -> Void
    let configuration: Configuration
    let logger: Logger
    private let watcher: FileStamp.Watcher

    /// Makes a reloader for a file already loaded; `load` loads it again and puts it in force, or throws and
    /// leaves the old one.
    public init(path: String, what: String, configuration: Configuration = .init(), logger: Logger,
                load: @escaping @Sendable (String) throws -> Void) {
        self.path = path
        self.what = what
        self.load = load
        self.configuration = configuration
        self.logger = logger
        watcher = FileStamp.Watcher(path: path)
    }

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    try? await Task.sleep(for: configuration.pollInterval)
                    if watcher.changed() { reload(reason: "the file changed") }
                }
            }
            await gracefulShutdownOrCancel()
            group.cancelAll()
        }
    }

    /// Reloads at once, on SIGHUP (the next poll then sees no change).
    public func hangUp() {
        _ = watcher.changed()
        reload(reason: "SIGHUP")
    }

    /// Loads the file and swaps it in, or keeps what is in force and logs why.
    func reload(reason: String) {
        do {
            try load(path)
            logger.notice("\(what) reloaded", metadata: ["file": "\(path)", "reason": "\(reason)"])
        } catch {
            logger.error("\(what) not reloaded; the previous \(what) stay in force",
                         metadata: ["file": "\(path)", "reason": "\(reason)", "error": "\n\(error)"])
        }
    }
}

/// The reloader of the rules file: a rules file that does not compile leaves the old rules in force, and the
/// log gives every diagnostic with its caret.
public typealias RulesReloader = FileReloader

extension FileReloader {
    /// Makes a reloader for a rules file already loaded into `rules`.
    public init(path: String, rules: RulesInForce, configuration: Configuration = .init(), logger: Logger) {
        self.init(path: path, what: "rules", configuration: configuration, logger: logger) { try rules.load(file: $0) }
    }
}

/// Waits until graceful shutdown begins or the task is cancelled.
private func gracefulShutdownOrCancel() async {
    try? await gracefulShutdown()
}

/// What identifies a version of a file without reading it: modification time and size.
struct FileStamp: Equatable {
    let modified: Date?
    let size: Int?

    init(path: String) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        modified = attributes?[.modificationDate] as? Date
        size = (attributes?[.size] as? NSNumber)?.intValue
    }

    /// Remembers the last stamp seen; `changed()` reports a difference once.
    final class Watcher: @unchecked Sendable {
        private let lock = NSLock()
        private let path: String
        private var last: FileStamp

        init(path: String) {
            self.path = path
            last = FileStamp(path: path)
        }

        func changed() -> Bool {
            let now = FileStamp(path: path)
            lock.lock()
            defer { lock.unlock() }
            guard now != last else { return false }
            last = now
            return true
        }
    }
}
