import Foundation
import HearthCore

/// A Python peer of the end-to-end tests (a script of `Tests/peers/`) running as a child process: it prints
/// `ready <port>` once it listens and writes each thing it receives, a JSON object a line, to
/// `received.ndjson` in its folder. `SMTPTestServer` and `WebhookTestReceiver` run on it.
final class PeerProcess: @unchecked Sendable {
    /// What the peer is, for messages ("the SMTP test server").
    let name: String
    /// The peer's folder, removed when it stops.
    let folder: String
    let process: ChildProcess
    let reader: OutputReader

    /// Starts `python -u script arguments` and waits until it is ready on `port`.
    init(_ name: String, python: String, script: String, arguments: [String], folder: String, port: Int,
         timeout: Double) throws {
        self.name = name
        self.folder = folder
        let output = try ChildProcess.pipe()
        let process = try ChildProcess.start(childEnds: [output.write], parentEnds: [output.read]) {
            try ChildProcess(path: python, arguments: ["-u", Harness.projectFile(script)] + arguments,
                             stdout: output.write, stderr: output.write)
        }
        reader = OutputReader(FileHandle(fileDescriptor: output.read, closeOnDealloc: true))
        self.process = process
        guard reader.waitFor("ready \(port)", timeout: timeout) else {
            process.signal(SIGTERM)
            throw ServerProcessError(message: "the \(name) did not start within \(timeout) s: \(reader.text)")
        }
    }

    /// The file the peer records what it receives in.
    var recording: String { folder + "/received.ndjson" }

    /// Stops the peer (killing it if SIGTERM has not within 30 s) and removes its folder.
    func stop() async {
        await process.terminate()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// What the peer recorded so far, oldest first: each line that `read` makes something of.
    func received<T>(_ read: (JSON) -> T?) -> [T] {
        guard let data = FileManager.default.contents(atPath: recording) else { return [] }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let json = try? JSON.parse(line) else { return nil }
            return read(json)
        }
    }

    /// Waits (generously) until `received()` holds at least `count` items (`what`: "messages"); answers them all.
    func wait<T>(for count: Int, _ what: String, timeout: Double, _ received: () -> [T]) async throws -> [T] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let all = received()
            if all.count >= count { return all }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ServerProcessError(message: "the \(name) had \(received().count) of \(count) \(what) within \(timeout) s; its log: \(reader.text)")
    }
}
