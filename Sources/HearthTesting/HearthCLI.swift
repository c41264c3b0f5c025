import Foundation

/// Runs the `hearth` command line (the binary `ServerProcess` starts), for tests of its subcommands.
public enum HearthCLI {
    /// Runs `hearth` with arguments and standard input; answers its exit status and its output (standard
    /// output and standard error together). The waiting happens on a thread of its own: on one of Swift
    /// concurrency's few shared threads it would hold up the tasks of every other test meanwhile (in-process
    /// servers, WebSocket clients answering a server's close), and two such waits would stall them all.
    /// `environment` adds variables to this process's (`HEARTH_ADMIN_KEY` for a tool that acts through a server).
    public static func run(_ arguments: [String], input: String = "",
                           environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        try await RawHTTPConnection.onOwnThread { try runNow(arguments, input: input, environment: environment) }
    }

    private static func runNow(_ arguments: [String], input: String,
                               environment: [String: String]) throws -> (status: Int32, output: String) {
        let output = try ChildProcess.pipe()
        let stdin = try ChildProcess.pipe()
        let child = try ChildProcess.start(childEnds: [output.write, stdin.read], parentEnds: [output.read, stdin.write]) {
            try ChildProcess(path: ServerProcess.binaryPath(), arguments: arguments,
                             environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new }, stdin: stdin.read,
                             stdout: output.write, stderr: output.write)
        }
        let writer = FileHandle(fileDescriptor: stdin.write, closeOnDealloc: true)
        writer.write(Data(input.utf8))
        try writer.close()
        let data = FileHandle(fileDescriptor: output.read, closeOnDealloc: true).readDataToEndOfFile()
        return (child.waitUntilExit(), String(decoding: data, as: UTF8.self))
    }
}
