import Foundation
import Logging

/// Collects every log line of a server in memory, for tests that inspect logs.
public final class LogCapture: @unchecked Sendable {  // `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    /// An empty capture.
    public init() {}

    /// Everything logged so far, one line per entry, metadata included.
    public var text: String {
        lock.lock()
        defer { lock.unlock() }
        return lines.joined(separator: "\n")
    }

    /// A factory for `ServerConfiguration.logHandlerFactory`.
    public var factory: @Sendable (String) -> any LogHandler {
        { [self] label in CapturingLogHandler(label: label, capture: self) }
    }

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }
}

/// Renders lines as `HearthLogHandler` does, into a `LogCapture`.
struct CapturingLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    let label: String
    let capture: LogCapture

    init(label: String, capture: LogCapture) {
        self.label = label
        self.capture = capture
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        var line = "\(event.level) \(label): \(event.message)"
        for key in all.keys.sorted() { line += " \(key)=\(all[key]!)" }
        capture.append(line)
    }
}
