import Foundation
import HearthRules
import Logging
import ServiceLifecycle

/// Keeps the rules in force in step with the rules file: reloads it when its modification time or size
/// changes (polled) and on SIGHUP (`hangUp`, called by `HangUpReloads`). A new file that does not compile leaves the old rules in force, and the
/// log says why, with every diagnostic and its caret.
public struct RulesReloader: Service {
    /// Polling and signal settings.
    public struct Configuration: Sendable {
        /// Time between two looks at the file.
        public var pollInterval: Duration = .seconds(1)
        /// Makes the default configuration.
        public init() {}
    }

    let path: String
    let rules: RulesInForce
    let configuration: Configuration
    let logger: Logger
    private let watcher: FileStamp.Watcher

    /// Makes a reloader for a rules file already loaded into `rules`.
    public init(path: String, rules: RulesInForce, configuration: Configuration = .init(), logger: Logger) {
        self.path = path
        self.rules = rules
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

    /// Compiles the file and swaps it in, or keeps the rules in force and logs why.
    func reload(reason: String) {
        do {
            try rules.load(file: path)
            logger.notice("rules reloaded", metadata: ["file": "\(path)", "reason": "\(reason)"])
        } catch {
            logger.error("rules not reloaded; the previous rules stay in force",
                         metadata: ["file": "\(path)", "reason": "\(reason)", "error": "\n\(error)"])
        }
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
