import HearthCore
import Testing
@testable import HearthMail

@Suite struct MailMessageTests {
    static let from = try! MailAddress("no-reply@example.com", displayName: "Hearth")
    static let date = Timestamp(microseconds: 1_795_722_542_000_000)  // 2026-11-26T19:49:02Z

    static func message(subject: String = "Hello", to: [MailAddress] = [try! MailAddress("ann@example.com")],
                        text: String = "Hi Ann", html: String? = nil) -> MailMessage {
        MailMessage(from: from, to: to, subject: subject, text: text, html: html, messageID: "m1@example.com", date: date)
    }

    static func rendered(_ m: MailMessage) throws -> String { String(decoding: try m.render(), as: UTF8.self) }

    @Test func plainMessageHasEveryHeaderAndCRLFLines() throws {
        let text = try Self.rendered(Self.message())
        #expect(text == """
            From: Hearth <no-reply@example.com>\r
            To: <ann@example.com>\r
            Subject: Hello\r
            Date: Thu, 26 Nov 2026 19:49:02 +0000\r
            Message-ID: <m1@example.com>\r
            MIME-Version: 1.0\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            Hi Ann\r

            """)
    }

    /// Subjects and display names as they go into the header (RFC 2047 words for anything not plain ASCII).
    @Test(arguments: [
        ("Hello", "Subject: Hello"),
        ("Grüße", "Subject: =?utf-8?B?R3LDvMOfZQ==?="),
        ("=?utf-8?B?AA==?=", "Subject: =?utf-8?B?PT91dGYtOD9CP0FBPT0/PQ==?="),
        ("日本語のメール", "Subject: =?utf-8?B?5pel5pys6Kqe44Gu44Oh44O844Or?="),
    ])
    func subjectEncoding(subject: String, header: String) throws {
        let text = try Self.rendered(Self.message(subject: subject))
        #expect(text.split(separator: "\r\n").contains(Substring(header)), "\(text)")
    }

    @Test(arguments: [
        ("Ann", "To: Ann <ann@example.com>"),
        ("Ann Lee", "To: Ann Lee <ann@example.com>"),
        ("Lee, Ann", "To: \"Lee, Ann\" <ann@example.com>"),
        ("Ann \"the\" Lee", "To: \"Ann \\\"the\\\" Lee\" <ann@example.com>"),
        ("Zoë", "To: =?utf-8?B?Wm/Dqw==?= <ann@example.com>"),
    ])
    func displayNameEncoding(name: String, header: String) throws {
        let text = try Self.rendered(Self.message(to: [try MailAddress("ann@example.com", displayName: name)]))
        #expect(text.split(separator: "\r\n").contains(Substring(header)), "\(text)")
    }

    @Test func longSubjectsAreEncodedInWordsOfAtMost75Characters() throws {
        let text = try Self.rendered(Self.message(subject: String(repeating: "é", count: 100)))
        let words = text.split(separator: "\r\n").filter { $0.contains("=?utf-8?B?") }
        #expect(words.count == 5)
        #expect(words.allSatisfy { $0.trimmingPrefix("Subject: ").trimmingPrefix(" ").count <= 75 })
    }

    @Test(arguments: [
        ("subject", "Hi\r\nBcc: all@example.com"),
        ("subject", "Hi\nBcc: all@example.com"),
        ("subject", "Hi\rX"),
    ])
    func lineBreaksInTheSubjectAreRefused(field: String, value: String) {
        #expect(throws: HearthError.invalidArgument("subject: a line break in the subject is refused (header injection)")) {
            try Self.message(subject: value).render()
        }
    }

    @Test(arguments: ["Ann\r\nBcc: x@example.com", "Ann\nX", "Ann\r"])
    func lineBreaksInADisplayNameAreRefused(name: String) {
        #expect(throws: HearthError.self) { try MailAddress("ann@example.com", displayName: name) }
        #expect(throws: HearthError.self) { try MailAddress(parsing: "\(name) <ann@example.com>") }
    }

    @Test(arguments: [
        ("ann@example.com", true), ("a.b+c@mail.example.org", true), ("", false), ("ann", false), ("ann@", false),
        ("@example.com", false), ("ann@example", false), ("ann@@example.com", false), ("a nn@example.com", false),
        ("ann@example.com\r\nRCPT TO:<x@y.z>", false), ("<ann@example.com>", false), ("ann@exa..com", false),
        ("zoë@example.com", false),
    ])
    func addresses(address: String, valid: Bool) {
        #expect(((try? MailAddress(address)) != nil) == valid, "\(address)")
    }

    @Test(arguments: [
        ("no-reply@example.com", "no-reply@example.com", nil),
        ("Hearth <no-reply@example.com>", "no-reply@example.com", "Hearth"),
        ("\"Hearth, Inc\" <no-reply@example.com>", "no-reply@example.com", "Hearth, Inc"),
        ("  <no-reply@example.com>", "no-reply@example.com", nil),
    ] as [(String, String, String?)])
    func parsingASender(text: String, address: String, name: String?) throws {
        let parsed = try MailAddress(parsing: text)
        #expect(parsed.address == address && parsed.displayName == name)
    }

    @Test func htmlAlternativeIsMultipart() throws {
        let text = try Self.rendered(Self.message(text: "Hi", html: "<p>Hi</p>"))
        let boundary = try #require(text.split(separator: "boundary=\"").last?.split(separator: "\"").first)
        #expect(text.contains("Content-Type: multipart/alternative; boundary=\"\(boundary)\"\r\n"))
        #expect(text.contains("--\(boundary)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nHi\r\n"))
        #expect(text.contains("--\(boundary)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>Hi</p>\r\n"))
        #expect(text.hasSuffix("--\(boundary)--\r\n"))
        #expect(try Self.rendered(Self.message(text: "Hi", html: "<p>Hi</p>")) == text, "the same message renders the same")
    }

    /// Bodies in quoted-printable: escapes, soft breaks before 76 characters, trailing space, line ends.
    @Test(arguments: [
        ("plain", "plain"),
        ("a=b", "a=3Db"),
        ("Grüße", "Gr=C3=BC=C3=9Fe"),
        ("trailing ", "trailing=20"),
        ("one\ntwo", "one\r\ntwo"),
        ("one\r\ntwo", "one\r\ntwo"),
        (".\n..", ".\r\n.."),
        (String(repeating: "x", count: 80), String(repeating: "x", count: 75) + "=\r\n" + String(repeating: "x", count: 5)),
    ])
    func quotedPrintable(body: String, encoded: String) {
        #expect(QuotedPrintable.encode(body) == encoded)
    }

    @Test func headerLinesAreFolded() throws {
        let many = try (0..<10).map { try MailAddress("person\($0)@example.com") }
        let text = try Self.rendered(Self.message(to: many))
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(lines.contains { $0.hasPrefix(" <person") })
    }

    @Test(arguments: [
        (0 as Int64, "Thu, 1 Jan 1970 00:00:00 +0000"),
        (951_782_400_000_000, "Tue, 29 Feb 2000 00:00:00 +0000"),
        (1_795_722_542_000_000, "Thu, 26 Nov 2026 19:49:02 +0000"),
    ])
    func dates(microseconds: Int64, header: String) {
        #expect(MailHeader.date(Timestamp(microseconds: microseconds)) == header)
    }
}
