import Foundation
import HearthAuth
import HearthCore
@testable import HearthServer
import HearthTesting
import Testing

/// How an account message is written from the templates, without a server: its link, its lifetime in
/// words, its one-line subject, and the public URLs the setting takes.
@Suite struct AccountMailTests {
    static let start = Timestamp(rfc3339: "2026-11-26T10:00:00Z")!

    static func message(_ purpose: OutboxMessage.Purpose, lifetime seconds: Int64 = 3_600) -> OutboxMessage {
        OutboxMessage(id: "m1", purpose: purpose, to: "Ann@example.com", uid: "u1", token: "hrs_abc-DEF_123",
                      expiresAt: Timestamp(microseconds: start.microseconds + seconds * 1_000_000), createdAt: start)
    }

    @Test(arguments: [
        (3_600, "1 hour"), (7_200, "2 hours"), (86_400, "1 day"), (3 * 86_400, "3 days"), (1_800, "30 minutes"),
        (60, "1 minute"), (90, "90 seconds"), (1, "1 second"), (0, "0 seconds"),
    ] as [(Int64, String)])
    func aLifetimeReadsAsAPersonSaysIt(seconds: Int64, text: String) {
        #expect(AccountMail.span(from: Self.start, to: Timestamp(microseconds: Self.start.microseconds + seconds * 1_000_000)) == text)
    }

    @Test(arguments: [
        ("https://hearth.example.com", "https://hearth.example.com"),
        ("https://hearth.example.com/", "https://hearth.example.com"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("https://example.com/hearth/", "https://example.com/hearth"),
    ])
    func aPublicURLIsKeptWithoutItsTrailingSlash(url: String, base: String) throws {
        #expect(try AccountMail.publicBase(url) == base)
    }

    @Test(arguments: ["ftp://example.com", "example.com", "https://", "https://example.com/?next=1", "https://example.com/#top",
                      "https://user@example.com", ""])
    func aPublicURLThatIsNotOneIsRefused(url: String) {
        #expect(throws: HearthError.self) { try AccountMail.publicBase(url) }
    }

    @Test func theLinkAndTheTextsComeFromTheTemplates() throws {
        let mail = AccountMail(templates: try MailTemplates(), appName: "Letter", publicURL: "https://letter.example.com")
        let reset = try #require(mail.content(for: Self.message(.passwordReset)))
        #expect(reset.link == "https://letter.example.com/auth/action?mode=resetPassword&code=hrs_abc-DEF_123")
        #expect(reset.subject == "Reset your password for Letter")
        #expect(reset.text.contains(reset.link) && reset.text.contains("for 1 hour (until 2026-11-26 11:00 UTC)"))
        #expect(reset.html.contains("<a href=\"https://letter.example.com/auth/action?mode=resetPassword&amp;code=hrs_abc-DEF_123\">"))
        let verify = try #require(mail.content(for: Self.message(.emailVerification, lifetime: 3 * 86_400)))
        #expect(verify.link.contains("?mode=verifyEmail&code=") && verify.text.contains("for 3 days"))
        #expect(mail.content(for: Self.message(.email)) == nil, "an app email comes whole")
        #expect(AccountMail.queryEscaped("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9")
    }

    @Test func aSubjectIsOneLineWhateverTheTemplate() throws {
        let folder = TestFolders.path("hearth-subject")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "\n  {{appName}}:\n new password\r\n for {{email}}  \n".write(toFile: folder + "/reset-password.subject.mustache",
                                                                       atomically: true, encoding: .utf8)
        let mail = AccountMail(templates: try MailTemplates(folder: folder), appName: "A & B", publicURL: nil)
        #expect(mail.content(for: Self.message(.passwordReset))?.subject == "A & B: new password for Ann@example.com")
    }
}
