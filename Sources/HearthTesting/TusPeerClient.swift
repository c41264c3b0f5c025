import Foundation
import HearthCore

/// tuspy, the tus project's Python client, as a real peer of `/v1/uploads`: runs `Tests/peers/tus_upload.py`
/// (from the same Python as `SMTPTestServer`: `HEARTH_PEER_PYTHON`, else `.build/peers-venv`, made by
/// `Tests/peers/install.sh`) once per call, to completion, on a thread of its own. A missing tuspy is an
/// error that says how to install it, never a skipped test.
public struct TusPeerClient: Sendable {
    /// What one run came to.
    public struct Result: Sendable, Equatable {
        /// The upload's URL (nil when the server refused).
        public var url: String?
        /// The offset reached.
        public var offset: Int64?
        /// The SHA-256 of the whole file, in hex, as Python's hashlib computes it.
        public var sha256: String?
        /// The status of a refusal.
        public var status: Int?
        /// The refusal, as tuspy reported it.
        public var error: String?
    }

    /// The server's creation URL, `http://127.0.0.1:<port>/v1/uploads`.
    public var endpoint: String
    /// Sent as `Authorization: Bearer <token>`.
    public var token: String?

    /// A client of the server on `port`.
    public init(port: Int, token: String?) {
        endpoint = "http://127.0.0.1:\(port)/v1/uploads"
        self.token = token
    }

    /// Uploads `file` as the object `path` (or goes on with the upload at `url`), in chunks of `chunkSize`,
    /// stopping once `stopAt` bytes are in (a multiple of `chunkSize`) or at the end.
    public func upload(file: String, path: String? = nil, contentType: String? = nil, metadata: [String: String] = [:],
                       chunkSize: Int = 64 * 1024, stopAt: Int? = nil, url: String? = nil,
                       checksum: Bool = false) async throws -> Result {
        let python = try Self.python()
        let out = TestFolders.make() + "/tus-result.json"
        var arguments = [Harness.projectFile("Tests/peers/tus_upload.py"), "--endpoint", endpoint, "--file", file,
                         "--out", out, "--chunk-size", "\(chunkSize)"]
        if let path { arguments += ["--path", path] }
        if let contentType { arguments += ["--content-type", contentType] }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { arguments += ["--meta", "\(key)=\(value)"] }
        if let token { arguments += ["--token", token] }
        if let stopAt { arguments += ["--stop-at", "\(stopAt)"] }
        if let url { arguments += ["--url", url] }
        if checksum { arguments.append("--checksum") }
        let log = TestFolders.make() + "/tus-log.txt"
        let status = try await RawHTTPConnection.onOwnThread { [arguments] in
            let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            defer { close(fd) }
            return try ChildProcess(path: python, arguments: arguments, stdout: fd, stderr: fd).waitUntilExit()
        }
        guard status == 0, let data = FileManager.default.contents(atPath: out), let json = try? JSON.parse(Array(data)) else {
            let text = FileManager.default.contents(atPath: log).map { String(decoding: $0, as: UTF8.self) } ?? ""
            throw ServerProcessError(message: "tus_upload.py exited with \(status): \(text)")
        }
        func int(_ key: String) -> Int64? {
            if case .int(let n)? = json[key] { return n }
            return nil
        }
        return Result(url: json["url"]?.stringValue, offset: int("offset"), sha256: json["sha256"]?.stringValue, status: int("status").map(Int.init),
                      error: json["error"]?.stringValue)
    }

    /// The Python that has tuspy, or an error saying how to install it.
    static func python() throws -> String {
        try PeerPython.find(module: "tusclient", package: "tuspy",
                            purpose: "the tus end-to-end tests need tuspy (the tus project's Python client, from PyPI)")
    }
}
