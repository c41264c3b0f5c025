import Foundation

/// A `hearth serve` process, for tests that kill or signal a real server.
public final class ServerProcess: @unchecked Sendable {
    /// The port the server listens on.
    public let port: Int
    /// The admin key it was started with.
    public let adminKey: String
    let process: ChildProcess
    let reader: OutputReader?

    /// The server's process id.
    public var pid: pid_t { process.pid }

    /// Everything the server has written to standard output so far (its log).
    public var outputText: String { reader?.text ?? "" }

    /// The `hearth` binary: `$HEARTH_BINARY`, else the package's own debug build.
    public static func binaryPath(filePath: String = #filePath) -> String {
        if let path = ProcessInfo.processInfo.environment["HEARTH_BINARY"] { return path }
        var url = URL(fileURLWithPath: filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { break }
        }
        return url.appendingPathComponent(".build/debug/hearth").path
    }

    /// Starts `hearth serve` on a free port over a data folder and waits until it listens.
    public static func start(dataDirectory: String, adminKey: String = "test-admin-key-" + UUID().uuidString,
                             arguments: [String] = [], fileSizeBlocks: Int? = nil, timeout: Double = 60) async throws -> ServerProcess {
        try await launch(["serve", "--port", "0", "--data", dataDirectory] + arguments, adminKey: adminKey,
                         fileSizeBlocks: fileSizeBlocks, timeout: timeout)
    }

    init(port: Int, adminKey: String, process: ChildProcess, reader: OutputReader? = nil) {
        self.port = port
        self.adminKey = adminKey
        self.process = process
        self.reader = reader
    }

    /// Sends a signal (SIGKILL, SIGTERM, ...).
    public func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// Waits for the process to end and returns its exit status.
    public func waitForExit(timeout: Double = 30) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.signal(SIGTERM)
                throw ServerProcessError(message: "hearth serve did not exit within \(timeout) s")
            }
            // Sleeping, not blocking: the tasks that let the server finish (a client answering its close
            // frames) may need this thread.
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.exitStatus ?? -1
    }

    /// A client for this server.
    public func client(as caller: Caller = .admin) -> HearthClient {
        HearthClient(port: port, adminKey: adminKey, as: caller)
    }
}

/// A server process failed to start or stop.
public struct ServerProcessError: Error, CustomStringConvertible {
    /// What happened.
    public let message: String
    public var description: String { message }
}

/// Collects a process's output and finds the port in its "listening on" line.
final class OutputReader: @unchecked Sendable {
    private let condition = NSCondition()
    private var buffer = ""
    private var ended = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                condition.lock()
                if data.isEmpty { ended = true } else { buffer += String(decoding: data, as: UTF8.self) }
                condition.broadcast()
                condition.unlock()
                if data.isEmpty { return }
            }
        }
    }

    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return buffer
    }

    /// True once the pipe has closed.
    var isEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    /// Waits until the output holds `text`; false when it ended or the time ran out first.
    func waitFor(_ text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !buffer.contains(text) {
            if ended || !condition.wait(until: deadline) { return false }
        }
        return true
    }

    func waitForPort(timeout: Double) -> Int? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let range = buffer.range(of: #"listening on https?://[^:]+:(\d+)"#, options: .regularExpression) {
                return Int(buffer[range].split(separator: ":").last!)
            }
            if ended || !condition.wait(until: deadline) { return nil }
        }
    }
}
