import Foundation
import HearthCore
import HearthTesting
import Testing

/// `hearth serve --config FILE`: a JSON object of settings, under the flags and `HEARTH_*` variables. Every
/// setting the file may hold takes effect; a broken file stops the server before it starts, saying why.
@Suite struct ServeConfigTests {
    static func write(_ text: String) throws -> String {
        let path = TestFolders.make() + "/hearth.json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func everySettingOfTheFileTakesEffectAndFlagsWin() async throws {
        let folder = TestFolders.make()
        let rules = try RulesHTTPTests.writeRules("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /closed/{id} { allow get: if false; }
              }
            }
            """)
        let key = "config-admin-key-" + UUID().uuidString
        let config = try Self.write("""
            {"data": "\(folder)/data", "host": "127.0.0.1", "port": 1, "adminKey": "\(key)", "synchronous": "full",
             "autoIds": "random", "logLevel": "warning", "rules": "\(rules)", "dev": true, "trustForwardedFor": true,
             "accessTokenLifetime": 120, "argon2Memory": 64, "argon2Iterations": 1, "argon2Parallelism": 1,
             "metricsKey": "\(key)-metrics"}
            """)
        // The file's port 1 would need privileges: the flag's 0 (any free port) wins.
        let server = try await ServerProcess.launch(["serve", "--config", config, "--port", "0"])
        defer { server.signal(SIGKILL) }  // this test is not about shutting down
        let admin = HearthClient(port: server.port, adminKey: key)
        #expect(try await admin.put("/v1/docs/closed/c1", #"{"n": 1}"#).status == 200)
        #expect(FileManager.default.fileExists(atPath: "\(folder)/data/hearth.sqlite"))
        // Random auto ids: no creation time at their start (one random id in a million would read as a time
        // within a day of now).
        let created = try #require(try await admin.post("/v1/docs/closed", #"{"n": 2}"#).json?["id"]?.stringValue)
        #expect(carriesNoRecentTime(created), "\(created)")
        // Development mode: the denial names the deciding rule and its expression.
        let denied = try await HearthClient(port: server.port, adminKey: key, as: .nobody).get("/v1/docs/closed/c1")
        #expect(denied.status == 403)
        #expect(denied.text.contains("app.rules:4") && denied.text.contains("allow denied by `false`"), "\(denied.text)")
        // The metrics take the metrics key.
        #expect(try await admin.get("/metrics", as: .nobody).status == 401)
        #expect(try await admin.get("/metrics", as: .token("\(key)-metrics")).status == 200)
        // Access tokens live as long as the file says.
        let signedUp = try await admin.signedUp("ann@example.com", "a long enough password")
        #expect(signedUp.expiresIn == 120)
    }

    /// The connection timeouts come from flags or the file (flags first), in seconds with a fraction.
    @Test func connectionTimeoutsComeFromFlagsOrTheFile() async throws {
        let folder = TestFolders.make()
        let config = try Self.write(#"{"idleTimeout": 30, "requestHeadTimeout": 0.3, "requestBodyTimeout": 0.3}"#)
        let server = try await ServerProcess.launch(["serve", "--config", config, "--port", "0", "--data", folder,
                                                     "--idle-timeout", "0.3"])
        defer { server.signal(SIGKILL) }
        // The flag's 0.3 s wins over the file's 30 s: the server closes an idle connection well within 10 s.
        let idle = try RawHTTPConnection(port: server.port, timeout: 10)
        #expect(try await idle.readToEnd().isEmpty)
        let head = try RawHTTPConnection(port: server.port, timeout: 10)
        try await head.send("GET /healthz HTTP/1.1\r\nHo")
        let late = try await head.readResponse()
        #expect(late.status == 408 && late.errorMessage?.contains("within 0.3 seconds") == true, "\(late.text)")
        let body = try RawHTTPConnection(port: server.port, timeout: 10)
        try await body.send("POST /v1/query HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n{")
        let stalled = try await body.readResponse()
        #expect(stalled.status == 408 && stalled.errorMessage?.contains("body made no progress within 0.3 seconds") == true,
                "\(stalled.text)")
    }

    /// The removed index-writes setting still starts a server, with a warning, whichever way it is given.
    @Test(arguments: [(["--index-writes", "deferred"], [String: String](), ""),
                      ([], ["HEARTH_INDEX_WRITES": "immediate"], ""),
                      ([], [:], #"{"indexWrites": "deferred"}"#)])
    func theOldIndexWritesSettingStartsWithAWarning(flags: [String], environment: [String: String], file: String) async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = file.isEmpty ? [] : ["--config", try Self.write(file)]
        let server = try await ServerProcess.launch(["serve", "--port", "0", "--data", folder + "/data"] + flags + config,
                                                    adminKey: "k-" + UUID().uuidString, environment: environment)
        #expect(server.outputText.contains("warning: --index-writes (HEARTH_INDEX_WRITES, indexWrites) is deprecated and ignored"),
                "\(server.outputText)")
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }

    @Test func aBrokenFileStopsTheServerSayingWhy() async throws {
        let folder = TestFolders.make()
        let cases: [(String, String)] = [
            (#"{"colour": "blue"}"#, "unknown key 'colour'"),
            (#"{"port": [8080]}"#, "'port' in"),
            (#"{"port": true}"#, "port must be 0-65535, got true"),
            (#"{"port": "eighty"}"#, "port must be 0-65535, got eighty"),
            (#"{"dev": "yes"}"#, "'dev' in"),
            (#"{"synchronous": "sometimes"}"#, "synchronous must be FULL or NORMAL"),
            (#"{"indexWrites": "later"}"#, "indexWrites must be deferred or immediate, got later"),
            (#"{"autoIds": "sequential"}"#, "autoIds must be ordered or random, got sequential"),
            (#"{"logLevel": "loud"}"#, "unknown log level loud"),
            (#"{"accessTokenLifetime": 0}"#, "accessTokenLifetime must be an integer from 1"),
            (#"{"trustForwardedFor": "maybe"}"#, "trustForwardedFor must be true or false"),
            (#"{"metricsKey": "short"}"#, "the metrics key must be at least 32 characters long"),
            (#"{"idleTimeout": 0}"#, "idleTimeout must be a number of seconds from 0.1 to 86400, got 0"),
            (#"{"requestHeadTimeout": "soon"}"#, "requestHeadTimeout must be a number of seconds from 0.1 to 86400, got soon"),
            (#"{"requestBodyTimeout": 1e9}"#, "requestBodyTimeout must be a number of seconds"),
            (#"{"publicUrl": "ftp://hearth.example.com"}"#, "publicUrl: 'ftp://hearth.example.com' is not an address like https://"),
            (#"{"publicUrl": "https://hearth.example.com/?a=1"}"#, "publicUrl: 'https://hearth.example.com/?a=1' is not an address"),
            (#"{"appName": ""}"#, "appName must be one line of text"),
            (#"{"mailTemplates": "/nonexistent/templates"}"#, "mailTemplates: cannot read the folder /nonexistent/templates"),
            (#"{"port": 8080, "port": 8081}"#, "duplicate key \"port\""),
            (#"[1, 2]"#, "config file must hold a JSON object"),
            (#"{"port": "#, "JSON"),
        ]
        for (text, message) in cases {
            let config = try Self.write(text)
            // A flag wins over the file, so the port flag is left out where the file's port is the broken part.
            let port = text.contains("\"port\"") ? [] : ["--port", "0"]
            let (status, output) = try await HearthCLI.run(["serve", "--config", config, "--data", folder] + port)
            #expect(status != 0, "\(text) started a server")
            #expect(output.contains(message), "\(text): \(output)")
            #expect(!output.contains("hearth listening"), "\(text): \(output)")
        }
        let (status, output) = try await HearthCLI.run(["serve", "--config", folder + "/missing.json", "--data", folder])
        #expect(status != 0)
        #expect(output.contains("cannot read config file"), "\(output)")
    }
}
