import Foundation
import HearthCore

/// The functions file in force: one parsed, immutable value, swapped atomically when the file is reloaded.
/// A write job reads it once, so a reload never mixes two files within a commit.
public final class FunctionsInForce: @unchecked Sendable {
    private let lock = NSLock()
    private var current: FunctionsFile?
    private var wake: @Sendable () -> Void = {}

    /// Makes an empty holder: no triggers until a file is installed.
    public init() {}

    /// The file in force, or nil when none is configured.
    public var file: FunctionsFile? {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Installs a file (nil: none).
    public func install(_ file: FunctionsFile?) {
        lock.lock()
        current = file
        lock.unlock()
    }

    /// Sets what `committedEvents()` calls: the delivery's wakeup.
    public func onCommittedEvents(_ body: @escaping @Sendable () -> Void) {
        lock.lock()
        wake = body
        lock.unlock()
    }

    /// Told once a commit that may have queued events other than documents' is durable (documents' commits
    /// wake delivery as commit observers).
    public func committedEvents() {
        lock.lock()
        let body = wake
        lock.unlock()
        body()
    }

    /// Reads and parses a file and installs it; on an error the file in force stays as it was.
    @discardableResult
    public func load(file path: String) throws(HearthError) -> FunctionsFile {
        let file = try FunctionsFile.load(file: path)
        install(file)
        return file
    }
}
