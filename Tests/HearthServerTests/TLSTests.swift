import Foundation
import HearthCore
import HearthTesting
import HTTPTypes
import Testing

/// HTTPS served by `hearth serve` itself (`--tls-cert`, `--tls-key`), checked with real TLS clients on
/// loopback that trust only the test's own certificate: curl, and Python's `ssl` module for the certificate
/// served, WSS and the protocol versions. The certificate is reloaded on SIGHUP; broken files stop the start.
@Suite struct TLSTests {
    /// The files the server is started with, in a folder of their own; a test copies certificates over them.
    struct Served {
        let folder = TestFolders.make()
        var certificate: String { folder + "/served.cert.pem" }
        var key: String { folder + "/served.key.pem" }

        func install(_ pair: TestCertificate) throws {
            for (from, to) in [(pair.certificate, certificate), (pair.key, key)] {
                try? FileManager.default.removeItem(atPath: to)
                try FileManager.default.copyItem(atPath: from, toPath: to)
            }
        }
    }

    /// The gRPC port from the server's log (its line may come after the HTTP port's).
    static func grpcPort(_ server: ServerProcess) async throws -> Int {
        try await waitForLog(server, "gRPC API on")
        let text = server.outputText
        let range = try #require(text.range(of: #"gRPC API on [^:]+:(\d+)"#, options: .regularExpression))
        return try #require(Int(text[range].split(separator: ":").last ?? ""))
    }

    /// Waits, generously, until the server's log holds `line` `count` times.
    static func waitForLog(_ server: ServerProcess, _ line: String, count: Int = 1) async throws {
        for _ in 0..<600 {
            if server.outputText.components(separatedBy: line).count - 1 >= count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("no '\(line)' in the log: \(server.outputText)")
    }

    @Test func httpsAndWSSWithTheCertificateReloadedOnSIGHUP() async throws {
        let first = try await TestCertificate.make(name: "first")
        let second = try await TestCertificate.make(name: "second")
        let served = Served()
        try served.install(first)
        let folder = TestFolders.make()
        let server = try await ServerProcess.start(dataDirectory: folder, arguments: [
            "--tls-cert", served.certificate, "--tls-key", served.key, "--grpc-port", "0",
            "--cors-origin", "https://app.example.com",
        ])
        defer { server.signal(SIGKILL) }
        #expect(server.outputText.contains("listening on https://"))
        let grpcPort = try await Self.grpcPort(server)

        // curl, trusting only the test's certificate: a write and a read, with CORS over HTTPS.
        let base = "https://127.0.0.1:\(server.port)"
        let auth = ["Authorization": "Bearer \(server.adminKey)"]
        let written = try await Curl.request("PUT", base + "/v1/docs/notes/a", headers: auth.merging(["Content-Type": "application/json"]) { a, _ in a },
                                             body: Array(#"{"title": "over TLS"}"#.utf8), trusting: first.certificate)
        #expect(written.status == 200 && written.text.contains("over TLS"), "\(written.text)")
        let read = try await Curl.request("GET", base + "/v1/docs/notes/a", headers: auth.merging(["Origin": "https://app.example.com"]) { a, _ in a },
                                          trusting: first.certificate)
        #expect(read.status == 200 && read.version == "HTTP/1.1", "\(read.text)")
        #expect(read.headers[HTTPField.Name("Access-Control-Allow-Origin")!] == "https://app.example.com")
        #expect(read.text.contains("over TLS"))
        // Without the certificate trusted, curl refuses the server: it is TLS, and checked.
        await #expect(throws: (any Error).self) { try await Curl.request("GET", base + "/healthz") }

        // Python's ssl: the certificate served is the file's, on both ports; WSS carries the listen protocol.
        #expect(try await TLSClient.run("cert", port: server.port, trusting: first.certificate).output
            .trimmingCharacters(in: .whitespacesAndNewlines) == first.derHex())
        #expect(try await TLSClient.run("cert", port: grpcPort, trusting: first.certificate).output
            .trimmingCharacters(in: .whitespacesAndNewlines) == first.derHex())
        let pong = try await TLSClient.run("wss", port: server.port, trusting: first.certificate, [server.adminKey])
        #expect(pong.output.contains(#""type":"pong""#) || pong.output.contains(#""type": "pong""#), "\(pong.output) \(pong.errorOutput)")
        // TLS 1.2 at least.
        #expect(try await TLSClient.run("version", port: server.port, trusting: first.certificate, ["1.1"]).output.hasPrefix("refused"))
        #expect(try await TLSClient.run("version", port: server.port, trusting: first.certificate, ["1.2"]).output.hasPrefix("ok"))

        // A broken new file keeps the old certificate, and the log says why.
        try "not a certificate".write(toFile: served.certificate, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        try await Self.waitForLog(server, "TLS certificate not reloaded")
        #expect(server.outputText.contains(served.certificate))
        #expect(try await TLSClient.run("cert", port: server.port, trusting: first.certificate).output
            .trimmingCharacters(in: .whitespacesAndNewlines) == first.derHex())

        // The renewed pair: new connections, on both ports, get it after SIGHUP.
        try served.install(second)
        server.signal(SIGHUP)
        try await Self.waitForLog(server, "TLS certificate reloaded")
        #expect(try await TLSClient.run("cert", port: server.port, trusting: second.certificate).output
            .trimmingCharacters(in: .whitespacesAndNewlines) == second.derHex())
        #expect(try await TLSClient.run("cert", port: grpcPort, trusting: second.certificate).output
            .trimmingCharacters(in: .whitespacesAndNewlines) == second.derHex())
        let again = try await Curl.request("GET", base + "/v1/docs/notes/a", headers: auth, trusting: second.certificate)
        #expect(again.text.contains("over TLS"), "\(again.text)")
        // Still one server: the old certificate is no longer served.
        await #expect(throws: (any Error).self) { try await Curl.request("GET", base + "/healthz", trusting: first.certificate) }
    }

    /// What is wrong with the files, and the words the refusal must hold.
    enum Broken: String, CaseIterable, Sendable {
        case missingCertificate, missingKey, garbageCertificate, garbageKey, keyOfAnotherCertificate, certificateAlone, keyAlone
    }

    /// A start with broken TLS settings is refused, naming the file or the setting missing; nothing listens.
    @Test(arguments: Broken.allCases)
    func brokenFilesRefuseTheStart(_ broken: Broken) async throws {
        let pair = try await TestCertificate.make()
        let other = try await TestCertificate.make(name: "other")
        let folder = TestFolders.make()
        let garbage = folder + "/garbage.pem"
        try "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
            .write(toFile: garbage, atomically: true, encoding: .utf8)
        let missing = folder + "/missing.pem"
        let arguments: [String], expected: [String]
        switch broken {
        case .missingCertificate:
            (arguments, expected) = (["--tls-cert", missing, "--tls-key", pair.key], [missing, "cannot be read"])
        case .missingKey:
            (arguments, expected) = (["--tls-cert", pair.certificate, "--tls-key", missing], [missing, "cannot be read"])
        case .garbageCertificate:
            (arguments, expected) = (["--tls-cert", garbage, "--tls-key", pair.key], [garbage, "certificate"])
        case .garbageKey:
            (arguments, expected) = (["--tls-cert", pair.certificate, "--tls-key", garbage], [garbage, "private key"])
        case .keyOfAnotherCertificate:
            (arguments, expected) = (["--tls-cert", pair.certificate, "--tls-key", other.key], [other.key, "is not the key of", pair.certificate])
        case .certificateAlone:
            (arguments, expected) = (["--tls-cert", pair.certificate], ["tlsKey", "--tls-key"])
        case .keyAlone:
            (arguments, expected) = (["--tls-key", pair.key], ["tlsCert", "--tls-cert"])
        }
        let result = try await CommandResult.run(["serve", "--port", "0", "--data", folder + "/data"] + arguments)
        #expect(result.status != 0)
        let said = result.output + result.errorOutput
        #expect(!said.contains("listening on"), "\(said)")
        for words in expected { #expect(said.contains(words), "\(broken): '\(words)' not in \(said)") }
    }
}
