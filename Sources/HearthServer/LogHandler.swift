import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hearth's log lines: `time level label: message key=value ...` on standard output.
///
/// swift-log's stream handler re-renders all metadata whenever metadata is set, and the server sets a
/// request id on every request; this handler renders only when a line is actually written.
public struct HearthLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String

    /// Makes a handler for a logger label.
    public init(label: String, level: Logger.Level = .info) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        var line = "\(Self.timestamp()) \(event.level) \(label):"
        if !event.source.isEmpty { line += " [\(event.source)]" }
        line += " \(event.message)"
        for key in all.keys.sorted() { line += " \(key)=\(all[key]!)" }
        line += "\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    static func timestamp() -> String {
        let now = Date().timeIntervalSince1970
        var seconds = time_t(now.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int((now - now.rounded(.down)) * 1_000))
    }
}
