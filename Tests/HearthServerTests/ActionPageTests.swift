import Foundation
import HearthCore
import HearthMail
import HearthServer
import HearthTesting
import Logging
import Testing

/// The pages behind the account messages' links (`/auth/action`), followed as a person does: from the mail
/// a real SMTP server received, or from the development mailbox, through the page and its form.
@Suite struct ActionPageTests {
    static let password = "correct horse battery"
    static let newPassword = "a brand new password"

    /// Every page is HTML that no cache keeps, no Referer carries away and no other origin may script or frame.
    static func expectPageHeaders(_ page: HTTPResult, _ what: String) {
        #expect(page.header("Content-Type") == "text/html; charset=utf-8", "\(what)")
        #expect(page.header("Cache-Control") == "no-store", "\(what)")
        #expect(page.header("Referrer-Policy") == "no-referrer", "\(what)")
        let policy = page.header("Content-Security-Policy") ?? ""
        #expect(policy.contains("default-src 'none'") && policy.contains("form-action 'self'")
                && policy.contains("frame-ancestors 'none'"), "\(what): \(policy)")
        #expect(!page.text.contains("<script"), "\(what): no script")
    }

    /// The form's fields with the new password filled in, as a browser posts them.
    static func filled(_ form: HTTPResult, _ password: String, again: String? = nil) -> [(String, String)] {
        HearthClient.inputs(in: form.text).map { input in
            switch input.name {
            case "newPassword": (input.name, password)
            case "confirmPassword": (input.name, again ?? password)
            default: (input.name, input.value)
            }
        }
    }

    /// The link of the newest development-mailbox message of a purpose to an address.
    static func mailboxLink(_ server: TestServer, to address: String, purpose: String, after count: Int = 0) async throws -> String {
        _ = try await server.waitForOutboxToken(to: address, purpose: purpose, after: count, timeout: 60)
        let line = server.outboxMessages().last { $0["to"]?.stringValue == address && $0["purpose"]?.stringValue == purpose }
        return try #require(line?["link"]?.stringValue)
    }

    @Test func theVerificationLinkInTheMailVerifiesTheAddress() async throws {
        try await MailDeliveryTests.withSMTP { smtp in
            try await TestServer.with(configure: MailDeliveryTests.configure("smtp://127.0.0.1:\(smtp.port)")) { server, client in
                let ann = try await client.signedUp("ann@example.com", Self.password)
                #expect(try await client.post("/v1/auth/verify-email", as: .token(ann.token)).status == 202)
                let message = try #require(try await smtp.waitForMessages(1).first)
                #expect(message.header("Subject") == "Verify your email address for Hearth")
                #expect(message.header("Content-Type")?.hasPrefix("multipart/alternative") == true, "text and HTML")
                let link = try #require(message.actionLink, "\(message.decodedBody)")
                #expect(link.hasPrefix("http://127.0.0.1:\(server.port)/auth/action?mode=verifyEmail&code=hev_"), "\(link)")
                #expect(message.decodedBody.contains("<a href=\"\(link.replacingOccurrences(of: "&", with: "&amp;"))\">"),
                        "the HTML part links to the same page")

                let page = try await client.openLink(link)
                #expect(page.status == 200, "\(page.text)")
                #expect(page.text.contains("Email address verified") && page.text.contains("ann@example.com"), "\(page.text)")
                Self.expectPageHeaders(page, "verified")
                #expect(try await client.get("/v1/auth/me", as: .token(ann.token)).json?["emailVerified"] == .bool(true))

                let again = try await client.openLink(link)
                #expect(again.status == 400 && again.text.contains("invalid or has already been used"), "\(again.text)")
            }
        }
    }

    @Test func theResetLinkShowsAFormThatSetsTheNewPassword() async throws {
        try await MailDeliveryTests.withSMTP { smtp in
            try await TestServer.with(configure: MailDeliveryTests.configure("smtp://127.0.0.1:\(smtp.port)")) { _, client in
                _ = try await client.signedUp("ann@example.com", Self.password)
                #expect(try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")])).status == 202)
                let message = try #require(try await smtp.waitForMessages(1).first)
                #expect(message.header("Subject") == "Reset your password for Hearth")
                let link = try #require(message.actionLink, "\(message.decodedBody)")
                #expect(link.contains("/auth/action?mode=resetPassword&code=hrs_"), "\(link)")

                let form = try await client.openLink(link)
                #expect(form.status == 200, "\(form.text)")
                Self.expectPageHeaders(form, "form")
                #expect(form.text.contains(#"<form method="post" action="/auth/action">"#), "\(form.text)")
                #expect(form.text.contains(#"<label for="newPassword">"#) && form.text.contains(#"<label for="confirmPassword">"#))
                #expect(form.text.contains("ann@example.com"))
                #expect(try await client.openLink(link).status == 200, "showing the form does not spend the code")

                let done = try await client.submitForm(Self.filled(form, Self.newPassword))
                #expect(done.status == 200 && done.text.contains("Password changed"), "\(done.text)")
                Self.expectPageHeaders(done, "done")
                #expect(try await client.logIn("ann@example.com", Self.newPassword).status == 200)
                #expect(try await client.logIn("ann@example.com", Self.password).status != 200, "the old password is gone")

                let replayed = try await client.submitForm(Self.filled(form, "yet another password"))
                #expect(replayed.status == 400 && replayed.text.contains("invalid or has already been used"), "\(replayed.text)")
                #expect(try await client.openLink(link).status == 400)
                #expect(try await client.logIn("ann@example.com", Self.newPassword).status == 200, "the replay changed nothing")
            }
        }
    }

    @Test func aPasswordThePolicyRefusesShowsTheFormAgainWithTheReason() async throws {
        let logs = LogCapture()
        try await TestServer.with(configure: {
            $0.useTestAccounts()
            $0.requestLogLevel = .warning
            $0.logHandlerFactory = logs.factory
        }) { server, client in
            _ = try await client.signedUp("ann@example.com", Self.password)
            #expect(try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")])).status == 202)
            let link = try await Self.mailboxLink(server, to: "ann@example.com", purpose: "password-reset")
            let form = try await client.openLink(link)
            let code = try #require(link.components(separatedBy: "code=").last)
            #expect(logs.text.contains("/auth/action?mode=resetPassword&code=<redacted>") && !logs.text.contains(code),
                    "the request log never shows a code: \(logs.text)")

            let short = try await client.submitForm(Self.filled(form, "short"))
            #expect(short.status == 400, "\(short.text)")
            #expect(short.text.contains("The new password must be at least 8 characters."), "\(short.text)")
            #expect(short.text.contains(#"role="alert""#) && short.text.contains(#"<label for="newPassword">"#))
            Self.expectPageHeaders(short, "refused")

            let differ = try await client.submitForm(Self.filled(form, Self.newPassword, again: "another new password"))
            #expect(differ.status == 400 && differ.text.contains("The two passwords differ"), "\(differ.text)")

            // The form shown again carries the same code, still unspent.
            let done = try await client.submitForm(Self.filled(short, Self.newPassword))
            #expect(done.status == 200 && done.text.contains("Password changed"), "\(done.text)")
            #expect(try await client.logIn("ann@example.com", Self.newPassword).status == 200)
        }
    }

    /// Links and forms that must not work, each with the page and status it gets. A forged and a used code
    /// read the same: Hearth keeps no trace of a spent code.
    enum BadLink: String, CaseIterable, CustomTestStringConvertible {
        case malformedCode, forgedCode, usedCode, expiredResetCode, expiredVerifyCode, missingCode, unknownMode,
             markupInTheCode, usedCodeInTheForm, expiredCodeInTheForm, codeOnlyInThePostQuery, formNotFormEncoded,
             fieldTwiceInTheForm

        var testDescription: String { rawValue }

        /// Status, and a phrase of the page.
        var expected: (Int, String) {
            switch self {
            case .malformedCode, .forgedCode, .usedCode, .missingCode, .markupInTheCode, .usedCodeInTheForm,
                 .codeOnlyInThePostQuery:
                (400, "The link is invalid or has already been used.")
            case .expiredResetCode, .expiredVerifyCode, .expiredCodeInTheForm: (410, "This link has expired")
            case .unknownMode: (400, "unknown action &#39;recoverEmail&#39;")
            case .formNotFormEncoded: (415, "application/x-www-form-urlencoded")
            case .fieldTwiceInTheForm: (400, "The form has the field &#39;code&#39; twice.")
            }
        }
    }

    @Test(arguments: BadLink.allCases)
    func aLinkThatDoesNotWorkGetsAClearPage(_ bad: BadLink) async throws {
        let clock = ManualClock()
        try await TestServer.with(configure: { $0.useTestAccounts(clock: clock) }) { server, client in
            let ann = try await client.signedUp("ann@example.com", Self.password)
            #expect(try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")])).status == 202)
            #expect(try await client.post("/v1/auth/verify-email", as: .token(ann.token)).status == 202)
            let reset = try await Self.mailboxLink(server, to: "ann@example.com", purpose: "password-reset")
            let verify = try await Self.mailboxLink(server, to: "ann@example.com", purpose: "email-verification")
            let code = try #require(URLComponents(string: reset)?.queryItems?.first { $0.name == "code" }?.value)
            let form = try await client.openLink(reset)
            #expect(form.status == 200)

            let page: HTTPResult
            switch bad {
            case .malformedCode:
                page = try await client.get("/auth/action?mode=resetPassword&code=hrs_short", as: .nobody)
            case .forgedCode:
                // Well formed, never issued: the real code with its last characters changed.
                let forged = String(code.dropLast(4)) + (code.hasSuffix("AAAA") ? "BBBB" : "AAAA")
                page = try await client.get("/auth/action?mode=resetPassword&code=\(forged)", as: .nobody)
            case .usedCode:
                #expect(try await client.openLink(verify).status == 200)
                page = try await client.openLink(verify)
            case .expiredResetCode:
                clock.advance(seconds: 3_601)
                page = try await client.openLink(reset)
            case .expiredVerifyCode:
                clock.advance(seconds: 3 * 86_400 + 1)
                page = try await client.openLink(verify)
            case .missingCode:
                page = try await client.get("/auth/action?mode=resetPassword", as: .nobody)
            case .unknownMode:
                page = try await client.get("/auth/action?mode=recoverEmail&code=\(code)", as: .nobody)
            case .markupInTheCode:
                page = try await client.get("/auth/action?mode=resetPassword&code=%3Cscript%3Ealert(1)%3C/script%3E", as: .nobody)
            case .usedCodeInTheForm:
                #expect(try await client.submitForm(Self.filled(form, Self.newPassword)).status == 200)
                page = try await client.submitForm(Self.filled(form, "yet another password"))
            case .expiredCodeInTheForm:
                clock.advance(seconds: 3_601)
                page = try await client.submitForm(Self.filled(form, Self.newPassword))
            case .codeOnlyInThePostQuery:
                let withoutCode = Self.filled(form, Self.newPassword).filter { $0.0 != "code" }
                page = try await client.submitForm(withoutCode, to: "/auth/action?mode=resetPassword&code=\(code)")
            case .formNotFormEncoded:
                page = try await client.post("/auth/action", HearthClient.body([("mode", "resetPassword"), ("code", code),
                                                                                ("newPassword", Self.newPassword)]), as: .nobody)
            case .fieldTwiceInTheForm:
                page = try await client.submitForm(Self.filled(form, Self.newPassword) + [("code", code)])
            }
            let (status, phrase) = bad.expected
            #expect(page.status == status, "\(page.text)")
            #expect(page.text.contains(phrase), "\(page.text)")
            #expect(!page.text.contains("<script>alert"), "nothing interpolated is left unescaped")
            Self.expectPageHeaders(page, bad.rawValue)
            // Nothing changed: the password is the old one unless the case spent the code itself.
            let expectedPassword = bad == .usedCodeInTheForm ? Self.newPassword : Self.password
            #expect(try await client.logIn("ann@example.com", expectedPassword).status == 200)
        }
    }

    @Test func operatorTemplatesReplaceTheSubjectAndThePages() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "{{appName}}: a new password for {{email}}\n".write(toFile: folder + "/reset-password.subject.mustache",
                                                               atomically: true, encoding: .utf8)
        try "{{<page}}{{$title}}No{{/title}}{{$content}}<p>Nope, {{appName}}.</p>{{/content}}{{/page}}"
            .write(toFile: folder + "/page-link-invalid.mustache", atomically: true, encoding: .utf8)
        try "not a template".write(toFile: folder + "/README.txt", atomically: true, encoding: .utf8)
        try await MailDeliveryTests.withSMTP { smtp in
            let configure: (inout ServerConfiguration) -> Void = { configuration in
                MailDeliveryTests.configure("smtp://127.0.0.1:\(smtp.port)")(&configuration)
                configuration.mailTemplates = folder
                configuration.appName = "Letter <&>"
                configuration.publicURL = "https://letter.example.com/"
            }
            try await TestServer.with(configure: configure) { _, client in
                _ = try await client.signedUp("ann@example.com", Self.password)
                #expect(try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")])).status == 202)
                let message = try #require(try await smtp.waitForMessages(1).first)
                #expect(message.header("Subject") == "Letter <&>: a new password for ann@example.com", "plain text: nothing escaped")
                let link = try #require(message.actionLink)
                #expect(link.hasPrefix("https://letter.example.com/auth/action?mode=resetPassword&code=hrs_"), "\(link)")
                #expect(message.decodedBody.contains("Someone asked to reset the password"), "the text is still the built-in one")
                #expect(message.decodedBody.contains("<p>Letter &lt;&amp;&gt;</p>"), "the HTML part escapes what it interpolates")

                let invalid = try await client.get("/auth/action?mode=verifyEmail&code=nope", as: .nobody)
                #expect(invalid.status == 400 && invalid.text.contains("<p>Nope, Letter &lt;&amp;&gt;.</p>"), "\(invalid.text)")
                #expect(invalid.text.contains("<title>No – Letter &lt;&amp;&gt;</title>"), "the built-in layout around it")
                let form = try await client.openLink(link)
                #expect(form.status == 200 && form.text.contains("Choose a new password"), "the other pages stay built in")
            }
        }
    }

    @Test(arguments: [
        ("verify-email.subject.mustache", "Hi {{#email}}", "verify-email.subject.mustache, line 1, column 14: a section is never closed"),
        ("page.mustache", "<p>\n{{/content}}", "page.mustache, line 2"),
        ("page-reset-password.mustache", "<p>{{code</p>", "page-reset-password.mustache, line 1"),
        ("welcome.mustache", "Hi", "welcome.mustache names no template"),
    ])
    func aBrokenTemplateStopsTheStartNamingTheFile(file: String, text: String, message: String) async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try text.write(toFile: folder + "/" + file, atomically: true, encoding: .utf8)
        do {
            let server = try await TestServer.start(configure: { $0.mailTemplates = folder })
            await server.stop()
            Issue.record("a server started with a broken \(file)")
        } catch let error as HearthError {
            #expect(error.message.contains(folder + "/" + file) && error.message.contains(message), "\(error.message)")
        }
    }

    @Test func theCommandLineStopsOnABrokenTemplate() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "{{#link}}".write(toFile: folder + "/reset-password.text.mustache", atomically: true, encoding: .utf8)
        let (status, output) = try await HearthCLI.run(["serve", "--port", "0", "--data", folder + "/data", "--mail-templates", folder])
        #expect(status != 0, "\(output)")
        #expect(output.contains("\(folder)/reset-password.text.mustache, line 1") && !output.contains("hearth listening"), "\(output)")
    }
}
