import Foundation

/// A self-signed certificate and its key, made with the `openssl` command for `localhost` and `127.0.0.1`, as
/// PEM files in a folder of their own: a server serves it, and a client trusts it as its own authority.
public struct TestCertificate: Sendable {
    /// The certificate (PEM).
    public let certificate: String
    /// Its private key (PEM).
    public let key: String

    /// Makes a new pair in `folder` (a new temporary folder when nil), named `name`.cert.pem and `name`.key.pem.
    public static func make(in folder: String? = nil, name: String = "server") async throws -> TestCertificate {
        let folder = folder ?? TestFolders.make()
        let pair = TestCertificate(certificate: folder + "/\(name).cert.pem", key: folder + "/\(name).key.pem")
        let made = try await CommandResult.run(program: "/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", pair.key, "-out", pair.certificate,
        ])
        guard made.status == 0 else { throw ServerProcessError(message: "openssl req failed: \(made.errorOutput)") }
        return pair
    }

    /// The certificate's DER bytes, in hexadecimal: what a TLS client that received it reports.
    public func derHex() throws -> String {
        let text = try String(contentsOfFile: certificate, encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let der = Data(base64Encoded: body) else { throw ServerProcessError(message: "\(certificate) is not PEM") }
        return der.map { String(format: "%02x", $0) }.joined()
    }
}

/// Python's `ssl` module as a TLS client (Tests/peers/tls_client.py): it trusts only the certificate given
/// and checks the server's name, as an app's transport security does.
public enum TLSClient {
    /// The script, found from the package root.
    static func script(filePath: String = #filePath) -> String {
        var url = URL(fileURLWithPath: filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { break }
        }
        return url.appendingPathComponent("Tests/peers/tls_client.py").path
    }

    /// Runs one command of the script (`cert`, `wss`) against `127.0.0.1:port`; its output, or the failure.
    public static func run(_ command: String, port: Int, trusting ca: String, _ extra: [String] = []) async throws -> CommandResult {
        try await CommandResult.run(program: "/usr/bin/python3", [script(), command, String(port), ca] + extra)
    }
}
