import Foundation
import HearthCore
import HearthMail
import HearthServer
import HearthTesting
import NIOCore
import Testing

/// The outbox delivered over SMTP to a real server (aiosmtpd, started by each test), read back from what
/// that server received. One at a time: each starts a Python process (and some a TLS certificate), which
/// all at once would crowd the timing-sensitive suites running beside them.
@Suite(.serialized) struct MailDeliveryTests {
    static let password = "correct horse battery"

    /// A server whose outbox goes to `smtp`, with quick retries so that a test sees several attempts.
    static func configure(_ url: String, caFile: String? = nil) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.useTestAccounts()
            var mail = MailSettings(url: try! SMTPURL(url), from: try! MailAddress("no-reply@hearth.test", displayName: "Hearth"))
            mail.retry = RetryPolicy(initialDelay: .milliseconds(50), maxDelay: .milliseconds(200), maxAttempts: 1000,
                                     maxAge: .seconds(3600))
            mail.smtp.commandTimeout = .seconds(30)
            if let caFile { try! mail.trust(caFile: caFile) }
            configuration.mail = mail
        }
    }

    static func withSMTP<T>(_ options: SMTPTestServer.Options = .init(),
                            _ body: (SMTPTestServer) async throws -> T) async throws -> T {
        let smtp = try await SMTPTestServer.start(options)
        return try await withCleanup({ try await body(smtp) }, cleanup: { await smtp.stop() })
    }

    static func email(_ to: [String], subject: String = "Hello", text: String = "Hi there", html: String? = nil) -> String {
        var fields: [(String, JSON)] = [("to", .array(to.map { .string($0) })), ("subject", .string(subject)), ("text", .string(text))]
        if let html { fields.append(("html", .string(html))) }
        return JSON.object(fields).text
    }

    /// Waits for the outbox to hold what `done` wants (the admin's view of it).
    static func waitForOutbox(_ client: HearthClient, until done: (JSON) -> Bool) async throws -> JSON {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let answer = try await client.get("/v1/admin/outbox")
            if let json = answer.json, done(json) { return json }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ExpectationFailure("the outbox did not reach the expected state: \(try await client.get("/v1/admin/outbox").text)")
    }

    static func first(_ json: JSON, _ state: String) -> JSON? {
        if case .array(let items)? = json[state] { return items.first }
        return nil
    }

    static func count(_ json: JSON, _ state: String) -> Int {
        if case .array(let items)? = json[state] { return items.count }
        return 0
    }

    /// The one-time code in an account message's link.
    static func code(in message: SMTPTestServer.Received) -> String? {
        message.actionLink.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "code" }?.value }
    }

    @Test func accountMessagesGoOverPlainSMTPAndTheirCodeWorks() async throws {
        try await Self.withSMTP { smtp in
            try await TestServer.with(configure: Self.configure("smtp://127.0.0.1:\(smtp.port)")) { server, client in
                _ = try await client.signUp("Ann@example.com", Self.password)
                #expect(try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")])).status == 202)
                let message = try #require(try await smtp.waitForMessages(1).first)
                #expect(message.from == "no-reply@hearth.test" && message.to == ["Ann@example.com"] && !message.tls)
                #expect(message.header("From") == "Hearth <no-reply@hearth.test>")
                #expect(message.header("To") == "<Ann@example.com>")
                #expect(message.header("Subject") == "Reset your password for Hearth")
                #expect(message.header("Message-ID")?.hasSuffix("@hearth.test>") == true)
                #expect(message.header("Date") != nil)
                let code = try #require(Self.code(in: message))
                let done = try await client.post("/v1/auth/password-reset/confirm",
                                                 HearthClient.body([("token", code), ("newPassword", "a reset password")]), as: .nobody)
                #expect(done.status == 200, "\(done.text)")
                _ = try await Self.waitForOutbox(client) { Self.count($0, "pending") == 0 && Self.count($0, "dead") == 0 }
                #expect(server.outboxMessages().isEmpty, "with SMTP, nothing goes to the development mailbox")
            }
        }
    }

    @Test func appEmailOverRequiredStartTLS() async throws {
        var options = SMTPTestServer.Options()
        options.requireStartTLS = true
        try await Self.withSMTP(options) { smtp in
            let configure = Self.configure("smtp://127.0.0.1:\(smtp.port)", caFile: smtp.certificateFile)
            try await TestServer.with(configure: configure) { _, client in
                let sent = try await client.post("/v1/messages/email", Self.email(
                    ["ann@example.com", "bob@example.com"], subject: "Grüße aus Hearth", text: "Hallo\n.\nEnde", html: "<p>Hallo</p>"))
                #expect(sent.status == 202, "\(sent.text)")
                let messages = try await smtp.waitForMessages(2)
                #expect(Set(messages.flatMap(\.to)) == ["ann@example.com", "bob@example.com"], "one message per address")
                for message in messages {
                    #expect(message.tls, "STARTTLS was used")
                    #expect(message.header("Subject") == "=?utf-8?B?R3LDvMOfZSBhdXMgSGVhcnRo?=")
                    #expect(message.header("To") == "<ann@example.com>, <bob@example.com>")
                    #expect(message.header("Content-Type")?.hasPrefix("multipart/alternative") == true)
                    #expect(message.data.contains("Hallo\r\n.\r\nEnde"), "a lone dot survives dot-stuffing")
                }
            }
        }
    }

    @Test func authOverImplicitTLS() async throws {
        var options = SMTPTestServer.Options()
        options.implicitTLS = true
        options.auth = ("ann", "p@ss word")
        try await Self.withSMTP(options) { smtp in
            let configure = Self.configure("smtps://ann:p%40ss%20word@127.0.0.1:\(smtp.port)", caFile: smtp.certificateFile)
            try await TestServer.with(configure: configure) { _, client in
                #expect(try await client.post("/v1/messages/email", Self.email(["ann@example.com"])).status == 202)
                let message = try #require(try await smtp.waitForMessages(1).first)
                #expect(message.tls && message.user == "ann")
            }
        }
    }

    @Test func aWrongPasswordIsDeadWithTheServersReasonAndCanBeRetried() async throws {
        var options = SMTPTestServer.Options()
        options.startTLS = true
        options.auth = ("ann", "right")
        try await Self.withSMTP(options) { smtp in
            let configure = Self.configure("smtp://ann:wrong@127.0.0.1:\(smtp.port)", caFile: smtp.certificateFile)
            try await TestServer.with(configure: configure) { _, client in
                #expect(try await client.post("/v1/messages/email", Self.email(["ann@example.com"])).status == 202)
                let outbox = try await Self.waitForOutbox(client) { Self.count($0, "dead") == 1 }
                let dead = try #require(Self.first(outbox, "dead"))
                #expect(dead["lastError"]?.stringValue?.contains("AUTH PLAIN: 535") == true, "\(dead)")
                let id = try #require(dead["id"]?.stringValue)
                let retried = try await client.post("/v1/admin/outbox/retry", HearthClient.body([("id", id)]))
                #expect(retried.status == 200 && retried.json?["retried"] == .array([.string(id)]), "\(retried.text)")
                _ = try await Self.waitForOutbox(client) { (Self.first($0, "dead")?["attempts"]).map { $0 == .int(1) } ?? false }
                #expect(smtp.received().isEmpty)
            }
        }
    }

    @Test func aRefusedRecipientIsDeadWhileTheOthersArrive() async throws {
        var options = SMTPTestServer.Options()
        options.reject = ["nobody@example.com"]
        try await Self.withSMTP(options) { smtp in
            try await TestServer.with(configure: Self.configure("smtp://127.0.0.1:\(smtp.port)")) { _, client in
                let sent = try await client.post("/v1/messages/email", Self.email(["ann@example.com", "nobody@example.com"]))
                #expect(sent.status == 202)
                let outbox = try await Self.waitForOutbox(client) { Self.count($0, "dead") == 1 && Self.count($0, "pending") == 0 }
                let dead = try #require(Self.first(outbox, "dead"))
                #expect(dead["to"] == .string("nobody@example.com") && dead["subject"] == .string("Hello"))
                #expect(dead["lastError"]?.stringValue?.contains("550 5.1.1 <nobody@example.com>: no such user here") == true, "\(dead)")
                #expect(dead["attempts"] == .int(1), "a permanent refusal is not retried")
                #expect(try await smtp.waitForMessages(1).map(\.to) == [["ann@example.com"]])
                let unknown = try await client.post("/v1/admin/outbox/retry", HearthClient.body([("id", "nope")]))
                #expect(unknown.status == 404 && unknown.errorMessage == "no dead message has the id 'nope'")
            }
        }
    }

    @Test func hearthOutboxListsAndRetriesDeadMessagesThroughTheServerOrOnTheFile() async throws {
        var options = SMTPTestServer.Options()
        options.reject = ["nobody@example.com"]
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.withSMTP(options) { smtp in
            let server = try await TestServer.start(dataDirectory: folder, configure: Self.configure("smtp://127.0.0.1:\(smtp.port)"))
            let client = server.client()
            #expect(try await client.post("/v1/messages/email", Self.email(["nobody@example.com"])).status == 202)
            _ = try await Self.waitForOutbox(client) { Self.count($0, "dead") == 1 }
            let throughServer = try await HearthCLI.run(["outbox", "list", "--data", folder], environment: ["HEARTH_ADMIN_KEY": server.adminKey])
            #expect(throughServer.status == 0 && throughServer.output.contains("550 5.1.1"), "\(throughServer.output)")
            await client.close()
            await server.stop()
        }
        let listed = try await HearthCLI.run(["outbox", "list", "--data", folder])
        let json = try JSON.parse(listed.output)
        #expect(Self.first(json, "dead")?["to"] == .string("nobody@example.com"), "\(listed.output)")
        let retried = try await HearthCLI.run(["outbox", "retry", "--data", folder])
        #expect(retried.status == 0 && retried.output.contains("retried"), "\(retried.output)")
        let after = try JSON.parse(try await HearthCLI.run(["outbox", "list", "--data", folder]).output)
        #expect(Self.count(after, "dead") == 0 && Self.first(after, "pending")?["attempts"] == .int(0), "\(after)")
        let unknown = try await HearthCLI.run(["outbox", "retry", "--data", folder, "--id", "nope"])
        #expect(unknown.status != 0 && unknown.output.contains("no dead message has the id 'nope'"))
    }

    @Test func aConnectionDroppedAtTheEndOfDataIsRetriedAndDeliveredOnce() async throws {
        var options = SMTPTestServer.Options()
        options.dropData = 2
        try await Self.withSMTP(options) { smtp in
            try await TestServer.with(configure: Self.configure("smtp://127.0.0.1:\(smtp.port)")) { _, client in
                #expect(try await client.post("/v1/messages/email", Self.email(["ann@example.com"])).status == 202)
                #expect(try await smtp.waitForMessages(1).count == 1)
                _ = try await Self.waitForOutbox(client) { Self.count($0, "pending") == 0 && Self.count($0, "dead") == 0 }
                #expect(smtp.received().count == 1, "delivered exactly once, and forgotten")
            }
        }
    }

    @Test func aServerThatIsDownGetsTheMessageWhenItComesUp() async throws {
        let port = try LoopbackPort.unused()
        try await TestServer.with(configure: Self.configure("smtp://127.0.0.1:\(port)")) { _, client in
            #expect(try await client.post("/v1/messages/email", Self.email(["ann@example.com"])).status == 202)
            let outbox = try await Self.waitForOutbox(client) {
                guard case .int(let attempts)? = Self.first($0, "pending")?["attempts"] else { return false }
                return attempts >= 2
            }
            #expect(Self.first(outbox, "pending")?["lastError"]?.stringValue?.contains("could not connect") == true, "\(outbox)")
            var options = SMTPTestServer.Options()
            options.port = port
            try await Self.withSMTP(options) { smtp in
                #expect(try await smtp.waitForMessages(1).count == 1)
                _ = try await Self.waitForOutbox(client) { Self.count($0, "pending") == 0 }
                #expect(smtp.received().count == 1)
            }
        }
    }

    @Test func messagesQueuedBeforeARestartAreDeliveredAfterIt() async throws {
        let port = try LoopbackPort.unused()
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try await TestServer.start(dataDirectory: folder, configure: Self.configure("smtp://127.0.0.1:\(port)"))
        let client = first.client()
        _ = try await client.signUp("ann@example.com", Self.password)
        #expect(try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")])).status == 202)
        _ = try await Self.waitForOutbox(client) { Self.count($0, "pending") == 1 }
        await client.close()
        await first.stop()

        var options = SMTPTestServer.Options()
        options.port = port
        try await Self.withSMTP(options) { smtp in
            let second = try await TestServer.start(dataDirectory: folder, configure: Self.configure("smtp://127.0.0.1:\(port)"))
            let client = second.client()
            let message = try #require(try await smtp.waitForMessages(1).first)
            let code = try #require(Self.code(in: message))
            let done = try await client.post("/v1/auth/password-reset/confirm",
                                             HearthClient.body([("token", code), ("newPassword", "a reset password")]), as: .nobody)
            #expect(done.status == 200, "the code sealed before the restart opens after it: \(done.text)")
            await client.close()
            await second.stop()
        }
    }

    @Test func requiredStartTLSThatIsNotOfferedIsDead() async throws {
        try await Self.withSMTP { smtp in
            try await TestServer.with(configure: Self.configure("smtp://127.0.0.1:\(smtp.port)?starttls=required")) { _, client in
                #expect(try await client.post("/v1/messages/email", Self.email(["ann@example.com"])).status == 202)
                let outbox = try await Self.waitForOutbox(client) { Self.count($0, "dead") == 1 }
                #expect(Self.first(outbox, "dead")?["lastError"] == .string("the server does not offer STARTTLS, which the URL requires"))
                #expect(smtp.received().isEmpty)
            }
        }
    }

    /// Bad app-email requests: the documented status, a message naming what was wrong, nothing queued.
    @Test(arguments: [
        (#"{"to": [], "subject": "s", "text": "t"}"#, 400, "to: a non-empty array of addresses is required"),
        (#"{"to": ["ann"], "subject": "s", "text": "t"}"#, 400, "to[0]: 'ann' is not an address like name@example.com"),
        (#"{"to": ["a@b.co\r\nBcc: x@y.z"], "subject": "s", "text": "t"}"#, 400, "to[0]: a line break in an address is refused (header injection)"),
        (#"{"to": ["a@b.co"], "subject": "s\r\nBcc: x@y.z", "text": "t"}"#, 400, "subject: a line break in the subject is refused (header injection)"),
        (#"{"to": ["a@b.co"], "subject": "", "text": "t"}"#, 400, "subject: a non-empty string is required"),
        (#"{"to": ["a@b.co"], "subject": "s"}"#, 400, "text: a string is required"),
        (#"{"to": ["a@b.co"], "subject": "s", "text": "t", "html": 1}"#, 400, "html: a string is required when given"),
        (#"{"to": ["a@b.co"], "subject": "s", "text": "t", "cc": []}"#, 400, "unknown field 'cc'; known: to, subject, text, html"),
    ])
    func badAppEmailIsRefused(body: String, status: Int, message: String) async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { server, client in
            let answer = try await client.post("/v1/messages/email", body)
            #expect(answer.status == status && answer.errorMessage == message, "\(answer.text)")
            #expect(try await client.get("/v1/admin/outbox").json?["pending"] == .array([]))
            #expect(server.outboxMessages().isEmpty)
        }
    }

    @Test func appEmailLimitsAndWhoMaySend() async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { server, client in
            let many = Self.email((0...50).map { "p\($0)@example.com" })
            #expect(try await client.post("/v1/messages/email", many).errorMessage == "to: at most 50 addresses, got 51")
            let big = Self.email(["a@example.com"], text: String(repeating: "x", count: (1 << 20) + 1))
            #expect(try await client.post("/v1/messages/email", big).status == 413)
            let user = try await client.signedUp("ann@example.com", Self.password)
            let denied = try await client.post("/v1/messages/email", Self.email(["a@example.com"]), as: .token(user.token))
            #expect(denied.status == 403 && denied.errorMessage == "sending email needs the admin key or a function's identity token")
            #expect(try await client.get("/v1/admin/outbox", as: .token(user.token)).status == 403)
            // Without SMTP, app email goes to the development mailbox like account messages.
            #expect(try await client.post("/v1/messages/email", Self.email(["a@example.com"], html: "<b>hi</b>")).status == 202)
            let deadline = Date().addingTimeInterval(60)
            while server.outboxMessages().isEmpty, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let line = try #require(server.outboxMessages().first)
            #expect(line["purpose"] == .string("email") && line["to"] == .string("a@example.com") && line["html"] == .string("<b>hi</b>"))
        }
    }

    @Test(arguments: [
        (["--smtp-url", "http://mail.example.com", "--mail-from", "a@example.com"], "smtpUrl: unknown scheme 'http'"),
        (["--smtp-url", "smtp://mail.example.com:99999", "--mail-from", "a@example.com"], "smtpUrl: the port '99999' is not 1-65535"),
        (["--smtp-url", "smtp://mail.example.com"], "smtpUrl needs mailFrom"),
        (["--smtp-url", "smtp://mail.example.com", "--mail-from", "nobody"], "mailFrom: 'nobody' is not an address"),
        (["--mail-from", "a@example.com"], "mailFrom and smtpCaFile need smtpUrl"),
    ])
    func badMailSettingsStopTheStart(arguments: [String], message: String) async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (status, output) = try await HearthCLI.run(["serve", "--port", "0", "--data", folder] + arguments)
        #expect(status != 0 && output.contains(message), "\(output)")
    }
}
