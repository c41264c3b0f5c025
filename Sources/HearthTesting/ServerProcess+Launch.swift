import Foundation

extension ServerProcess {
    /// Starts `hearth` with exactly these arguments (say `serve --port 0 --demo letter`), `HEARTH_ADMIN_KEY` set
    /// when a key is given, and waits until it listens.
    public static func launch(_ arguments: [String], adminKey: String? = nil, timeout: Double = 60) throws -> ServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binaryPath())
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HEARTH_ADMIN_KEY"] = adminKey
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        // Read the output on a thread of its own, so the deadline holds even when the server prints nothing.
        let reader = OutputReader(output.fileHandleForReading)
        if let port = reader.waitForPort(timeout: timeout) {
            return ServerProcess(port: port, adminKey: adminKey ?? "", process: process, output: output, reader: reader)
        }
        process.terminate()
        throw ServerProcessError(message: "hearth \(arguments.joined(separator: " ")) did not start within \(timeout) s: \(reader.text)")
    }
}
