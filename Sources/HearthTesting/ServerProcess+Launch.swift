import Foundation

extension ServerProcess {
    /// Starts `hearth` with exactly these arguments (say `serve --port 0 --demo letter`), `HEARTH_ADMIN_KEY` set
    /// when a key is given, and waits until it listens. The waiting happens on a thread of its own (see
    /// `HearthCLI.run`).
    ///
    /// With `fileSizeBlocks`, the server can write no file past that many 512-byte blocks (`ulimit -f`, with
    /// SIGXFSZ ignored): writes past it fail as on a full disk. `environment` adds variables to this process's;
    /// `currentDirectory` is the server's working directory (nil: this process's).
    public static func launch(_ arguments: [String], adminKey: String? = nil, fileSizeBlocks: Int? = nil,
                              environment: [String: String] = [:], currentDirectory: String? = nil,
                              timeout: Double = 60) async throws -> ServerProcess {
        try await RawHTTPConnection.onOwnThread {
            try launchNow(arguments, adminKey: adminKey, fileSizeBlocks: fileSizeBlocks, extra: environment,
                          currentDirectory: currentDirectory, timeout: timeout)
        }
    }

    private static func launchNow(_ arguments: [String], adminKey: String?, fileSizeBlocks: Int?, extra: [String: String],
                                  currentDirectory: String?, timeout: Double) throws -> ServerProcess {
        var environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        environment["HEARTH_ADMIN_KEY"] = adminKey
        let output = try ChildProcess.pipe()
        let process = try ChildProcess.start(childEnds: [output.write], parentEnds: [output.read]) {
            guard let fileSizeBlocks else {
                return try ChildProcess(path: binaryPath(), arguments: arguments, environment: environment,
                                        currentDirectory: currentDirectory, stdout: output.write)
            }
            // The shell ignores SIGXFSZ (an ignored signal stays ignored across exec) and sets the limit, then
            // becomes the server.
            let script = "trap '' XFSZ; ulimit -f \(fileSizeBlocks) && exec \"$0\" \"$@\""
            return try ChildProcess(path: "/bin/sh", arguments: ["-c", script, binaryPath()] + arguments,
                                    environment: environment, currentDirectory: currentDirectory, stdout: output.write)
        }
        // Read the output on a thread of its own, so the deadline holds even when the server prints nothing.
        let reader = OutputReader(FileHandle(fileDescriptor: output.read, closeOnDealloc: true))
        if let port = reader.waitForPort(timeout: timeout) {
            return ServerProcess(port: port, adminKey: adminKey ?? "", process: process, reader: reader)
        }
        process.signal(SIGTERM)
        throw ServerProcessError(message: "hearth \(arguments.joined(separator: " ")) did not start within \(timeout) s: \(reader.text)")
    }
}
