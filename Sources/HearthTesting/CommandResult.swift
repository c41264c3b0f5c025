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
    /// `timeout` seconds. The waiting happens on a thread of its own (see `HearthCLI.run`). `environment` adds
    /// variables to this process's (`HEARTH_ADMIN_KEY` for a tool that acts through a server).
    public static func run(_ arguments: [String], currentDirectory: String? = nil, environment: [String: String] = [:],
                           timeout: Double = 60) async throws -> CommandResult {
        try await run(program: ServerProcess.binaryPath(), arguments, currentDirectory: currentDirectory,
                      environment: environment, timeout: timeout)
    }

    /// Runs another program (a peer the tests talk to: `openssl`, `curl`, a Python client) the same way.
    public static func run(program: String, _ arguments: [String], currentDirectory: String? = nil,
                           environment: [String: String] = [:], timeout: Double = 60) async throws -> CommandResult {
        try await RawHTTPConnection.onOwnThread {
            try runNow(program, arguments, currentDirectory: currentDirectory, environment: environment, timeout: timeout)
        }
    }

    private static func runNow(_ program: String, _ arguments: [String], currentDirectory: String?, environment: [String: String],
                               timeout: Double) throws -> CommandResult {
        let out = try ChildProcess.pipe(), err = try ChildProcess.pipe()
        let child = try ChildProcess.start(childEnds: [out.write, err.write], parentEnds: [out.read, err.read]) {
            try ChildProcess(path: program, arguments: arguments,
                             environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
                             currentDirectory: currentDirectory, stdout: out.write, stderr: err.write)
        }
        // Drain both pipes while the process runs, so a chatty process never blocks on a full pipe.
        let outReader = OutputReader(FileHandle(fileDescriptor: out.read, closeOnDealloc: true))
        let errReader = OutputReader(FileHandle(fileDescriptor: err.read, closeOnDealloc: true))
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning {
            if Date() > deadline {
                child.signal(SIGTERM)
                throw ServerProcessError(message: "\(program) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
            }
            usleep(10_000)
        }
        outReader.waitForEnd(timeout: 5)
        errReader.waitForEnd(timeout: 5)
        return CommandResult(status: child.exitStatus ?? -1, output: outReader.text, errorOutput: errReader.text)
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
