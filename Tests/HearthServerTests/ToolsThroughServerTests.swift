import Foundation
import HearthCore
import HearthEngine
import HearthStore
import HearthTesting
import Testing

/// Tools that write a data folder (`hearth fixtures load`, `hearth users`) act through the server that holds
/// it, so its open listeners hear of their changes as of any other write (the server looks for no other
/// process's changes); with no server running they open the folder themselves; and a folder held by a server
/// they cannot use stops them with a clear error before anything changes.
@Suite struct ToolsThroughServerTests {
    static let fixture = """
        {"users": [{"uid": "cat", "email": "cat@example.com", "password": "long enough password"}],
         "documents": {"rooms/r2": {"open": true, "n": 1}, "rooms/r3": {"open": false, "n": 2}},
         "files": {"rooms/r2/photo.png": {"source": "photo.png", "contentType": "image/png", "metadata": {"Taken": "2026"}}}}
        """
    static let photo: [UInt8] = Array("not really a png, but bytes all the same".utf8)

    /// A fixture file in a folder of its own, beside its photo; answers its path and the folder, to remove.
    static func fixtureFile(_ text: String = fixture) throws -> (file: String, folder: String) {
        let file = try FixtureFolder.write(text, files: ["photo.png": photo])
        return (file, (file as NSString).deletingLastPathComponent)
    }

    /// `hearth fixtures load` while a real `hearth serve` holds the folder: the tool finds the server's address in
    /// the folder and its admin key in the folder's `admin.key` (none is configured), and the server's listeners
    /// see the documents. A wrong key is refused first, changing nothing.
    @Test func fixturesLoadFromTheCommandLineReachesOpenListeners() async throws {
        let folder = TestFolders.make()
        let (file, fixtureFolder) = try Self.fixtureFile()
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.removeItem(atPath: fixtureFolder)
        }
        let server = try await ServerProcess.launch(["serve", "--port", "0", "--data", folder])
        let key = try String(contentsOfFile: folder + "/admin.key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let client = HearthClient(port: server.port, adminKey: key)
        let listener = try await ListenClient.connect(port: server.port, credentials: .header(key))
        do {
            #expect(try await client.put("/v1/docs/rooms/r1", #"{"open": true, "n": 0}"#).status == 200)
            try await listener.listen("q", query: #"{"from": "rooms", "where": [["open", "==", true]], "orderBy": [{"field": "n"}]}"#)
            _ = try await listener.expect("snapshot", id: "q", timeout: .seconds(30))
            try await listener.listen("d", doc: "rooms/r2")
            _ = try await listener.expect("snapshot", id: "d", timeout: .seconds(30))

            let refused = try await CommandResult.run(["fixtures", "load", file, "--data", folder],
                                                      environment: ["HEARTH_ADMIN_KEY": "hak_not_the_key_of_this_server_at_all"])
            #expect(refused.status != 0)
            #expect(refused.errorOutput.contains("refused the admin key from HEARTH_ADMIN_KEY")
                    && refused.errorOutput.contains("nothing was changed"), "\(refused.errorOutput)")
            #expect(try await client.get("/v1/docs/rooms/r2").status == 404)

            let load = try await CommandResult.run(["fixtures", "load", file, "--data", folder])
            #expect(load.status == 0, "\(load.errorOutput)")
            #expect(load.output.contains("2 documents written, 0 unchanged; 1 files written, 0 unchanged; 1 users created, 0 existing"),
                    "\(load.output)")
            // The object went through the server's file API, custom metadata keys kept as written.
            #expect(try await client.get("/v1/files/rooms/r2/photo.png").body == Self.photo)
            let photo = try await client.get("/v1/files/rooms/r2/photo.png?alt=json").json
            #expect(photo?["contentType"] == .string("image/png") && photo?["metadata"]?["Taken"] == .string("2026"), "\(String(describing: photo))")
            // Both targets see rooms/r2 (rooms/r3 is not open), then the server's own write after it.
            var seen: [String: JSON] = [:]
            for _ in 0..<2 {
                let snapshot = try await listener.expect("snapshot", timeout: .seconds(30))
                if let id = snapshot["id"]?.stringValue { seen[id] = snapshot }
            }
            for id in ["q", "d"] {
                guard case .array(let changes)? = seen[id]?["changes"] else {
                    Issue.record("no snapshot of \(id): \(seen)")
                    continue
                }
                #expect(changes.count == 1 && changes[0]["type"] == .string("added")
                        && changes[0]["doc"]?["path"] == .string("rooms/r2"), "\(id): \(changes)")
            }
            #expect(listener.views["q"]?.map(\.path.description) == ["rooms/r1", "rooms/r2"])
            // The server created the account.
            #expect(try await client.get("/v1/admin/users/cat").json?["email"] == .string("cat@example.com"))

            // Loading again changes nothing, so the next frame is that of the server's own write.
            let reload = try await CommandResult.run(["fixtures", "load", file, "--data", folder])
            #expect(reload.output.contains("0 documents written, 2 unchanged; 0 files written, 1 unchanged; 0 users created, 1 existing"),
                    "\(reload.output)")
            #expect(try await client.patch("/v1/docs/rooms/r2", #"{"n": 5}"#).status == 200)
            let after = try await listener.expect("snapshot", timeout: .seconds(30))
            guard case .array(let changes)? = after["changes"] else { throw ListenClient.Failure(description: "\(after)") }
            #expect(changes.first?["type"] == .string("modified") && changes.first?["doc"]?["data"]?["n"] == .int(5), "\(after)")
        } catch {
            Issue.record(error)
        }
        await listener.close()
        await client.close()
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }

    /// How a running server is reached: plain HTTP, or HTTPS only (`--tls-cert`, `--tls-key`).
    enum Transport: String, CaseIterable, Sendable { case http, https }

    /// `hearth users` and `hearth fixtures load` from the command line reach a running server whichever it serves,
    /// plain HTTP or HTTPS (trusting exactly the certificate in the server's `--tls-cert` file): an account made
    /// through it signs in, a loaded document reaches that account's open listener, and a revocation ends the
    /// listener at once. Over HTTPS, a certificate file replaced without the SIGHUP that makes the server serve it
    /// stops the tools, changing nothing, until the server serves it.
    @Test(arguments: Transport.allCases)
    func toolsReachARunningServerWhateverItServes(_ transport: Transport) async throws {
        let folder = TestFolders.make()
        let certificates = TestFolders.make()
        let (file, fixtureFolder) = try Self.fixtureFile()
        defer {
            for path in [folder, certificates, fixtureFolder] { try? FileManager.default.removeItem(atPath: path) }
        }
        let pair = try await TestCertificate.make(in: certificates, name: "served")
        let rules = try RulesHTTPTests.writeRules("""
            rules_version = '2';
            service cloud.firestore { match /databases/{d}/documents { match /rooms/{id} { allow read: if request.auth != null; } } }
            """)
        let tls = transport == .https ? ["--tls-cert", pair.certificate, "--tls-key", pair.key] : []
        let server = try await ServerProcess.start(dataDirectory: folder, arguments: ["--rules", rules] + tls)
        defer { server.signal(SIGKILL) }
        let key = ["HEARTH_ADMIN_KEY": server.adminKey]
        let base = "\(transport.rawValue)://127.0.0.1:\(server.port)"
        // What curl and the Python client trust: the served certificate over HTTPS; `-` is plain TCP.
        let trust = transport == .https ? pair.certificate : "-"
        let curlTrust = transport == .https ? ["--cacert", pair.certificate] : []

        let create = try await HearthCLI.run(["users", "create", "--data", folder, "--uid", "ann", "--email", "ann@example.com",
                                              "--password-stdin"], input: "long enough password\n", environment: key)
        #expect(create.status == 0 && create.output.contains(#""uid":"ann""#), "\(create.output)")
        let login = try await CommandResult.run(program: "/usr/bin/curl", curlTrust + [
            "-sS", "-X", "POST", "-H", "Content-Type: application/json",
            "--data", #"{"email": "ann@example.com", "password": "long enough password"}"#, base + "/v1/auth/login",
        ])
        let token = try #require((try? JSON.parse(Array(login.output.utf8)))?["token"]?.stringValue, "\(login.output) \(login.errorOutput)")

        // Ann's listener of rooms/r2, which the fixture adds; the script makes `ready` once its first snapshot came.
        let ready = certificates + "/listening"
        async let listening = TLSClient.run("listen", port: server.port, trusting: trust, [token, "rooms/r2", ready])
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: ready) { try await Task.sleep(for: .milliseconds(100)) }
        #expect(FileManager.default.fileExists(atPath: ready), "the listener got no snapshot")

        let load = try await CommandResult.run(["fixtures", "load", file, "--data", folder], environment: key)
        #expect(load.status == 0 && load.output.contains("2 documents written"), "\(load.output) \(load.errorOutput)")
        let revoke = try await HearthCLI.run(["users", "revoke", "--data", folder, "ann"], environment: key)
        #expect(revoke.status == 0 && revoke.output.contains("revoked 1 sessions of ann"), "\(revoke.output)")
        // The listener saw the loaded document, then the revocation's error, and the server closed it (1008).
        let frames = try await listening.output
        let added = frames.range(of: #""rooms/r2""#), refused = frames.range(of: #""unauthenticated""#)
        #expect(added != nil && refused != nil && added!.lowerBound < refused!.lowerBound, "\(frames)")
        #expect(frames.contains("close 1008"), "\(frames)")

        if transport == .https {
            let renewed = try await TestCertificate.make(in: certificates, name: "renewed")
            for (from, to) in [(renewed.certificate, pair.certificate), (renewed.key, pair.key)] {
                try FileManager.default.removeItem(atPath: to)
                try FileManager.default.copyItem(atPath: from, toPath: to)
            }
            let refused = try await HearthCLI.run(["users", "delete", "--data", folder, "ann"], environment: key)
            #expect(refused.status != 0, "\(refused.output)")
            #expect(refused.output.contains("serves a certificate other than the one in \(pair.certificate)")
                    && refused.output.contains("nothing was changed"), "\(refused.output)")
            server.signal(SIGHUP)
            try await TLSTests.waitForLog(server, "TLS certificate reloaded")
        }
        let delete = try await HearthCLI.run(["users", "delete", "--data", folder, "ann"], environment: key)
        #expect(delete.status == 0, "\(delete.output)")
        let list = try await HearthCLI.run(["users", "list", "--data", folder], environment: key)
        #expect(list.status == 0 && !list.output.contains("ann@example.com") && list.output.contains("cat@example.com"), "\(list.output)")
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }

    /// With no server running, every tool opens the folder itself (holding its lock while it works), and a
    /// server started afterwards serves what they wrote.
    @Test func toolsOpenTheFolderThemselvesWhenNoServerRuns() async throws {
        let folder = TestFolders.make()
        let (file, fixtureFolder) = try Self.fixtureFile()
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.removeItem(atPath: fixtureFolder)
        }
        let load = try await CommandResult.run(["fixtures", "load", file, "--data", folder])
        #expect(load.status == 0 && load.output.contains("2 documents written"), "\(load.errorOutput)")
        let create = try await HearthCLI.run(["users", "create", "--data", folder, "--uid", "dan", "--email", "dan@example.com",
                                              "--password-stdin"], input: "long enough password\n")
        #expect(create.status == 0 && create.output.contains(#""uid":"dan""#), "\(create.output)")
        let claims = try await HearthCLI.run(["users", "set-claims", "--data", folder, "dan", #"{"admin": true}"#])
        #expect(claims.status == 0, "\(claims.output)")
        let revoke = try await HearthCLI.run(["users", "revoke", "--data", folder, "dan"])
        #expect(revoke.status == 0 && revoke.output.contains("revoked 0 sessions of dan"), "\(revoke.output)")
        let delete = try await HearthCLI.run(["users", "delete", "--data", folder, "cat"])
        #expect(delete.status == 0, "\(delete.output)")
        let list = try await HearthCLI.run(["users", "list", "--data", folder])
        #expect(list.status == 0 && list.output.contains("dan@example.com") && !list.output.contains("cat@example.com"), "\(list.output)")
        // An export of a folder holding files writes their bytes beside the fixture file, so needs one.
        let toStandardOutput = try await CommandResult.run(["fixtures", "export", "--data", folder])
        #expect(toStandardOutput.status != 0 && toStandardOutput.errorOutput.contains("holds 1 files"), "\(toStandardOutput.errorOutput)")
        let export = try await CommandResult.run(["fixtures", "export", "--data", folder, "-o", fixtureFolder + "/out/fixture.json"])
        #expect(export.status == 0, "\(export.errorOutput)")
        #expect(FileManager.default.contents(atPath: fixtureFolder + "/out/files/rooms/r2/photo.png").map(Array.init) == Self.photo)
        let exported = try FixtureFile(path: fixtureFolder + "/out/fixture.json")
        #expect(exported.files == [FixtureFile.File(path: try FilePath("rooms/r2/photo.png"), source: "files/rooms/r2/photo.png",
                                                    contentType: "image/png", metadata: ["Taken": "2026"])])

        let server = try await TestServer.start(dataDirectory: folder, configure: { $0.useTestAccounts() })
        let client = server.client()
        #expect(try await client.get("/v1/admin/users/dan").json?["claims"]?["admin"] == .bool(true))
        #expect(try await client.get("/v1/admin/users/cat").status == 404)
        #expect(try await client.get("/v1/docs/rooms/r3").json?["data"]?["n"] == .int(2))
        #expect(try await client.get("/v1/files/rooms/r2/photo.png").body == Self.photo)
        await client.close()
        await server.stop()
    }

    /// A folder held by something a tool cannot act through: each tool fails with a message naming the holder
    /// and what to do, exits non-zero, and changes nothing.
    @Test func aHolderToolsCannotUseStopsThemWithAClearError() async throws {
        let folder = TestFolders.make()
        let (file, fixtureFolder) = try Self.fixtureFile()
        let (other, otherFolder) = try Self.fixtureFile(#"{"documents": {"rooms/r9": {"open": true}}}"#)
        defer {
            for path in [folder, fixtureFolder, otherFolder] { try? FileManager.default.removeItem(atPath: path) }
        }
        #expect(try await CommandResult.run(["fixtures", "load", file, "--data", folder]).status == 0)
        let before = try await CommandResult.run(["fixtures", "export", "--data", folder])
        let unreachable = try UnreachablePort()
        let port = unreachable.port
        let pid = getpid()

        struct Row {
            var owner: String
            var address: String?
            var key: String = "hak_some_key_the_tool_is_given_0123456789"
            var message: String
        }
        let rows = [
            Row(owner: "hearth serve", address: "http://127.0.0.1:\(port)",
                message: "is held by hearth serve (pid \(pid)) at http://127.0.0.1:\(port), which cannot be reached"),
            Row(owner: "hearth serve", address: nil, message: "held by hearth serve (pid \(pid)), which has not said where it answers"),
            Row(owner: "hearth import", address: nil, message: "is in use by hearth import (pid \(pid))"),
            // No key given, and no admin.key in the folder: the server was started with a key of its own.
            Row(owner: "hearth serve", address: "http://127.0.0.1:\(port)", key: "",
                message: "/admin.key cannot be read; nothing was changed. Set HEARTH_ADMIN_KEY"),
        ]
        let commands = [
            ["users", "create", "--data", folder, "--uid", "eve", "--email", "eve@example.com"],
            ["users", "revoke", "--data", folder, "cat"],
            ["users", "delete", "--data", folder, "cat"],
            ["users", "set-claims", "--data", folder, "cat", #"{"admin": true}"#],
            ["users", "list", "--data", folder],
            ["fixtures", "load", other, "--data", folder],
        ]
        for row in rows {
            var configuration = Store.Configuration(dataDirectory: folder)
            configuration.dataFolderOwner = row.owner
            let holder = try Store(configuration: configuration)
            if let address = row.address { holder.recordOwnerAddress(address) }
            for command in commands {
                let result = try await CommandResult.run(command, environment: ["HEARTH_ADMIN_KEY": row.key])
                #expect(result.status != 0, "\(row.owner) \(command): \(result.output)")
                #expect(result.errorOutput.contains(row.message), "\(row.owner) \(command): \(result.errorOutput)")
                if command[1] != "list" {
                    #expect(result.errorOutput.contains("nothing was changed"), "\(row.owner) \(command): \(result.errorOutput)")
                }
            }
            holder.close()
        }

        withExtendedLifetime(unreachable) {}

        let list = try await HearthCLI.run(["users", "list", "--data", folder])
        #expect(list.output.contains("cat@example.com") && !list.output.contains("eve@example.com"), "\(list.output)")
        #expect(!list.output.contains("\"admin\""), "\(list.output)")
        let after = try await CommandResult.run(["fixtures", "export", "--data", folder])
        #expect(after.output == before.output)
    }
}
