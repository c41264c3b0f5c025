import Foundation
import HearthCore

/// A real SMTP server for end-to-end tests: `aiosmtpd` running `Tests/peers/smtp_server.py`, on a loopback
/// port, writing each message it accepts to a file the test reads. Its Python comes from
/// `HEARTH_PEER_PYTHON`, else `.build/peers-venv` (made by `Tests/peers/install.sh`), else `python3`; a
/// missing aiosmtpd is an error that says how to install it, never a skipped test.
public final class SMTPTestServer: @unchecked Sendable {
    /// How the server behaves.
    public struct Options: Sendable {
        /// The port; nil picks a free one.
        public var port: Int?
        /// Offer STARTTLS (with a certificate the test made).
        public var startTLS = false
        /// Refuse mail until STARTTLS.
        public var requireStartTLS = false
        /// TLS from the first byte (`smtps://`).
        public var implicitTLS = false
        /// Require AUTH with this user and password (over TLS).
        public var auth: (user: String, password: String)?
        /// Recipients refused with 550.
        public var reject: [String] = []
        /// Connections dropped at the end of DATA, without a reply, before the first message is taken.
        public var dropData = 0

        /// Plain SMTP with nothing refused.
        public init() {}
    }

    /// One message the server accepted.
    public struct Received: Sendable {
        /// Envelope sender.
        public var from: String
        /// Envelope recipients.
        public var to: [String]
        /// The message as it arrived (headers and body, dot-stuffing undone).
        public var data: String
        /// Whether it came over TLS.
        public var tls: Bool
        /// The user that authenticated, if any.
        public var user: String?

        /// A header's raw value (first occurrence, unfolded).
        public func header(_ name: String) -> String? {
            let head = data.components(separatedBy: "\r\n\r\n").first ?? ""
            let unfolded = head.replacingOccurrences(of: "\r\n ", with: " ")
            for line in unfolded.components(separatedBy: "\r\n") where line.lowercased().hasPrefix(name.lowercased() + ":") {
                return String(line.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces)
            }
            return nil
        }
    }

    /// The port it listens on.
    public let port: Int
    /// The PEM certificate it presents, when it speaks TLS (trust it with `--smtp-ca-file`).
    public let certificateFile: String?
    let peer: PeerProcess

    /// Starts a server and waits until it listens.
    public static func start(_ options: Options = Options(), timeout: Double = 60) async throws -> SMTPTestServer {
        try await RawHTTPConnection.onOwnThread { try SMTPTestServer(options, timeout: timeout) }
    }

    private init(_ options: Options, timeout: Double) throws {
        let python = try Self.python()
        let folder = TestFolders.make()
        port = try options.port ?? LoopbackPort.unused()
        var arguments = ["--port", "\(port)", "--out", folder + "/received.ndjson"]
        if options.startTLS || options.requireStartTLS || options.implicitTLS {
            let (cert, key) = try Self.makeCertificate(in: folder)
            certificateFile = cert
            arguments += ["--cert", cert, "--key", key]
        } else {
            certificateFile = nil
        }
        if options.requireStartTLS { arguments.append("--require-starttls") }
        if options.implicitTLS { arguments.append("--implicit-tls") }
        if let auth = options.auth { arguments += ["--auth", "\(auth.user):\(auth.password)"] }
        for address in options.reject { arguments += ["--reject", address] }
        if options.dropData > 0 { arguments += ["--drop-data", "\(options.dropData)"] }
        peer = try PeerProcess("SMTP test server", python: python, script: "Tests/peers/smtp_server.py", arguments: arguments,
                               folder: folder, port: port, timeout: timeout)
    }

    /// Stops the server (killing it if SIGTERM has not within 30 s) and removes its folder.
    public func stop() async { await peer.stop() }

    /// The messages accepted so far, oldest first.
    public func received() -> [Received] {
        peer.received { json in
            guard let from = json["from"]?.stringValue,
                  case .array(let to)? = json["to"], let body = json["data"]?.stringValue else { return nil }
            var tls = false
            if case .bool(let b)? = json["tls"] { tls = b }
            return Received(from: from, to: to.compactMap(\.stringValue), data: body, tls: tls, user: json["user"]?.stringValue)
        }
    }

    /// Waits (generously) until at least `count` messages arrived; answers them all.
    public func waitForMessages(_ count: Int, timeout: Double = 60) async throws -> [Received] {
        try await peer.wait(for: count, "messages", timeout: timeout, received)
    }

    /// The Python that has aiosmtpd, or an error saying how to install it.
    static func python() throws -> String {
        try PeerPython.find(module: "aiosmtpd", purpose: "the SMTP end-to-end tests need aiosmtpd (a real SMTP server, from PyPI)")
    }

    /// A self-signed certificate for 127.0.0.1 and localhost, made with `openssl`.
    static func makeCertificate(in folder: String) throws -> (cert: String, key: String) {
        let cert = folder + "/cert.pem", key = folder + "/key.pem"
        let null = open("/dev/null", O_WRONLY)
        defer { close(null) }
        let openssl = try ChildProcess(path: "/usr/bin/openssl", arguments: [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ], stdout: null, stderr: null)
        guard openssl.waitUntilExit() == 0 else {
            throw ServerProcessError(message: "openssl could not make a test certificate (apt-get install openssl)")
        }
        return (cert, key)
    }
}
