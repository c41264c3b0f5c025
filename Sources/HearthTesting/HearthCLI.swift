import Foundation

/// Runs the `hearth` command line (the binary `ServerProcess` starts), for tests of its subcommands.
public enum HearthCLI {
    /// Runs `hearth` with arguments and standard input; answers its exit status and its output (standard
    /// output and standard error together).
    public static func run(_ arguments: [String], input: String = "") throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binaryPath())
        process.arguments = arguments
        let output = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
