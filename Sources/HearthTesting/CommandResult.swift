import Foundation

/// The outcome of running the `hearth` binary to completion: exit status and both outputs.
public struct CommandResult: Sendable {
    /// The exit status.
    public var status: Int32
    /// Everything written to standard output.
    public var output: String
    /// Everything written to standard error.
    public var errorOutput: String

    /// Runs `hearth` (see `ServerProcess.binaryPath`) with arguments and waits for it, killing it after
    /// `timeout` seconds.
    public static func run(_ arguments: [String], currentDirectory: String? = nil, timeout: Double = 60) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binaryPath())
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Drain both pipes while the process runs, so a chatty process never blocks on a full pipe.
        let outReader = OutputReader(out.fileHandleForReading)
        let errReader = OutputReader(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw ServerProcessError(message: "hearth \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
            }
            usleep(10_000)
        }
        outReader.waitForEnd(timeout: 5)
        errReader.waitForEnd(timeout: 5)
        return CommandResult(status: process.terminationStatus, output: outReader.text, errorOutput: errReader.text)
    }
}

extension OutputReader {
    /// Waits until the pipe is closed (the process exited and its output was read).
    func waitForEnd(timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if isEnded { return }
            usleep(5_000)
        }
    }
}
