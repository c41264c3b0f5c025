import HearthCore
import NIOCore
import NIOEmbedded
import Testing
@testable import HearthMail

@Suite struct SMTPProtocolTests {
    @Test(arguments: [
        ("smtp://mail.example.com", "mail.example.com", 25, SMTPURL.Security.startTLSIfOffered, nil, nil),
        ("smtp://mail.example.com:2525", "mail.example.com", 2525, .startTLSIfOffered, nil, nil),
        ("smtp://mail.example.com:587?starttls=required", "mail.example.com", 587, .startTLSRequired, nil, nil),
        ("smtps://ann:s%40cret@mail.example.com", "mail.example.com", 465, .implicitTLS, "ann", "s@cret"),
        ("smtps://ann%40example.com:p:w@[::1]:4650", "::1", 4650, .implicitTLS, "ann@example.com", "p:w"),
        ("SMTP://127.0.0.1:25/", "127.0.0.1", 25, .startTLSIfOffered, nil, nil),
    ] as [(String, String, Int, SMTPURL.Security, String?, String?)])
    func goodURLs(text: String, host: String, port: Int, security: SMTPURL.Security, user: String?, password: String?) throws {
        let url = try SMTPURL(text)
        #expect(url.host == host && url.port == port && url.security == security && url.user == user && url.password == password)
        #expect(!url.description.contains("cret"), "the password never shows")
    }

    @Test(arguments: [
        ("mail.example.com", "no scheme"),
        ("http://mail.example.com", "unknown scheme 'http'"),
        ("smtp://", "no host"),
        ("smtp://mail.example.com:0", "the port '0' is not 1-65535"),
        ("smtp://mail.example.com:99999", "the port '99999' is not 1-65535"),
        ("smtp://mail.example.com:x", "the port 'x' is not 1-65535"),
        ("smtp://mail.example.com/path", "a path is not allowed"),
        ("smtp://mail.example.com?tls=yes", "unknown option 'tls=yes'"),
        ("smtps://mail.example.com?starttls=required", "starttls=required does not apply to smtps://"),
        ("smtp://:pw@mail.example.com", "the user is empty or badly escaped"),
        ("smtp://ann:%zz@mail.example.com", "the password is badly escaped"),
        ("smtp://mail example.com", "the host has spaces or non-ASCII characters"),
    ])
    func badURLsSayWhy(text: String, why: String) {
        do {
            _ = try SMTPURL(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.hasPrefix("smtpUrl: \(why)"), "\(error.message)")
        }
    }

    /// Replies as the server sends them, split across reads anywhere.
    @Test(arguments: [
        ("220 ready\r\n", [SMTPReply(code: 220, lines: ["ready"])]),
        ("250-mail.example.com\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n",
         [SMTPReply(code: 250, lines: ["mail.example.com", "STARTTLS", "AUTH PLAIN LOGIN"])]),
        ("250\r\n354 go ahead\n", [SMTPReply(code: 250, lines: [""]), SMTPReply(code: 354, lines: ["go ahead"])]),
        ("550 5.1.1 no such user\r\n", [SMTPReply(code: 550, lines: ["5.1.1 no such user"])]),
    ])
    func replies(wire: String, expected: [SMTPReply]) throws {
        for split in 0...wire.utf8.count {
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(SMTPReplyDecoder()))
            let bytes = Array(wire.utf8)
            try channel.writeInbound(ByteBuffer(bytes: bytes[..<split]))
            try channel.writeInbound(ByteBuffer(bytes: bytes[split...]))
            var got: [SMTPReply] = []
            while let reply = try channel.readInbound(as: SMTPReply.self) { got.append(reply) }
            #expect(got == expected, "split at \(split)")
            _ = try channel.finish()
        }
    }

    @Test(arguments: ["hello\r\n", "25 short\r\n", "250-a\r\n251 b\r\n"])
    func garbledRepliesAreErrors(wire: String) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(SMTPReplyDecoder()))
        #expect(throws: SMTPFailure.self) { try channel.writeInbound(ByteBuffer(string: wire)) }
    }

    @Test(arguments: [
        ("Hi\r\n", "Hi\r\n.\r\n"),
        ("Hi", "Hi\r\n.\r\n"),
        (".\r\n", "..\r\n.\r\n"),
        ("a\r\n.b\r\n..c\r\n", "a\r\n..b\r\n...c\r\n.\r\n"),
        ("a\n.b\n", "a\r\n..b\r\n.\r\n"),
        ("", ".\r\n"),
    ])
    func dotStuffing(message: String, wire: String) {
        #expect(String(decoding: SMTPSession.dotStuffed(Array(message.utf8)), as: UTF8.self) == wire)
    }

    @Test(arguments: [
        (SMTPReply(code: 421, lines: ["busy"]), false),
        (SMTPReply(code: 451, lines: ["later"]), false),
        (SMTPReply(code: 452, lines: ["full"]), false),
        (SMTPReply(code: 550, lines: ["no such user"]), true),
        (SMTPReply(code: 554, lines: ["rejected"]), true),
    ])
    func repliesAreClassified(reply: SMTPReply, permanent: Bool) {
        #expect(SMTPFailure(reply: reply, during: "RCPT TO").permanent == permanent)
    }
}
