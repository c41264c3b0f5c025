import HearthCore
import NIOCore
import NIOPosix
import NIOSSL

/// A small SMTP client (RFC 5321) over SwiftNIO: one connection per `send`, EHLO (HELO when refused),
/// STARTTLS when offered or required, implicit TLS for `smtps://`, AUTH PLAIN or LOGIN, MAIL/RCPT/DATA
/// with dot-stuffing, QUIT. Every wait has a time limit. The answer classifies each recipient.
public struct SMTPClient: Sendable {
    /// The client's settings.
    public struct Configuration: Sendable {
        /// The server.
        public var url: SMTPURL
        /// The name given in EHLO.
        public var heloName: String = "localhost"
        /// Time to open the connection (and finish the TLS handshake).
        public var connectTimeout: TimeAmount = .seconds(30)
        /// Time for each reply but the one after the message (RFC 5321 suggests minutes; servers answer fast).
        public var commandTimeout: TimeAmount = .seconds(60)
        /// Time for the reply after the message's last byte (RFC 5321 §4.5.3.2.6: 10 minutes).
        public var dataTimeout: TimeAmount = .seconds(600)
        /// TLS settings (trust roots); the default trusts the system's certificate authorities.
        public var tls: TLSConfiguration = .makeClientConfiguration()

        /// Settings for a server with defaults for the rest.
        public init(url: SMTPURL) { self.url = url }
    }

    /// What became of one recipient.
    public enum Outcome: Sendable, Equatable {
        /// The server took responsibility for the message.
        case accepted
        /// It did not.
        case failed(SMTPFailure)
    }

    let configuration: Configuration
    let group: any EventLoopGroup
    /// Made once (it loads the trust roots) and shared by every connection.
    let tlsContext: Result<NIOSSLContext, SMTPFailure>

    /// A client; `group` defaults to NIO's shared threads.
    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
        do {
            tlsContext = .success(try NIOSSLContext(configuration: configuration.tls))
        } catch {
            tlsContext = .failure(SMTPFailure(permanent: "the TLS settings are unusable: \(error)"))
        }
    }

    /// Sends `message` (the rendered bytes) from `from` to each of `recipients` and answers each one's
    /// outcome, in order. Never throws: a failure of the whole conversation is every recipient's outcome.
    public func send(_ message: [UInt8], from: String, to recipients: [String]) async -> [Outcome] {
        let session: SMTPSession
        do {
            session = try await SMTPSession.open(configuration, tls: tlsContext, group: group)
        } catch {
            return recipients.map { _ in .failed(error) }
        }
        let outcomes = await session.transact(message, from: from, to: recipients)
        await session.quit()
        return outcomes
    }
}

/// One open connection and the conversation on it.
struct SMTPSession {
    let channel: any Channel
    let waiter: NIOLoopBound<SMTPReplyWaiter>
    let configuration: SMTPClient.Configuration
    let tls: Result<NIOSSLContext, SMTPFailure>
    var extensions: [String: String] = [:]
    var secure: Bool

    static func open(_ configuration: SMTPClient.Configuration, tls: Result<NIOSSLContext, SMTPFailure>,
                     group: any EventLoopGroup) async throws(SMTPFailure) -> SMTPSession {
        let url = configuration.url
        let implicit = url.security == .implicitTLS
        let sslContext: NIOSSLContext? = implicit ? try tls.get() : nil
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(configuration.connectTimeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(
                                try NIOSSLClientHandler(context: sslContext, serverHostname: SMTPSession.sniName(url.host)))
                        }
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                        try channel.pipeline.syncOperations.addHandler(SMTPReplyWaiter())
                    }
                }
                .connect(host: url.host, port: url.port).get()
        } catch {
            throw SMTPFailure(transient: "could not connect to \(url.host):\(url.port): \(error)")
        }
        let waiter: NIOLoopBound<SMTPReplyWaiter>
        do {
            waiter = try await channel.eventLoop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: SMTPReplyWaiter.self), eventLoop: channel.eventLoop)
            }.get()
        } catch {
            channel.close(promise: nil)
            throw SMTPFailure(transient: "the connection closed at once")
        }
        var session = SMTPSession(channel: channel, waiter: waiter, configuration: configuration, tls: tls, secure: implicit)
        do {
            try await session.greet()
        } catch {
            channel.close(promise: nil)
            throw error
        }
        return session
    }

    /// The name to send as SNI: none for an address literal.
    static func sniName(_ host: String) -> String? {
        let isIPv4 = host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
        return isIPv4 || host.contains(":") ? nil : host
    }

    /// Greeting, EHLO, STARTTLS and AUTH.
    mutating func greet() async throws(SMTPFailure) {
        let greeting = try await reply(to: "the greeting", timeout: configuration.commandTimeout)
        guard greeting.code == 220 else { throw SMTPFailure(reply: greeting, during: "greeting") }
        try await hello()
        let url = configuration.url
        if !secure, url.security == .startTLSRequired || (url.security == .startTLSIfOffered && extensions["STARTTLS"] != nil) {
            guard extensions["STARTTLS"] != nil else {
                throw SMTPFailure(permanent: "the server does not offer STARTTLS, which the URL requires")
            }
            let answer = try await command("STARTTLS")
            guard answer.code == 220 else { throw SMTPFailure(reply: answer, during: "STARTTLS") }
            try await startTLS()
            try await hello()
        }
        if let user = url.user {
            guard secure else {
                throw SMTPFailure(permanent: "the server offers no TLS, and the password is never sent in clear; use smtps:// or a server with STARTTLS")
            }
            try await authenticate(user: user, password: url.password ?? "")
        }
    }

    mutating func hello() async throws(SMTPFailure) {
        let ehlo = try await command("EHLO \(configuration.heloName)")
        if ehlo.code == 250 {
            extensions = [:]
            for line in ehlo.lines.dropFirst() {
                let words = line.split(separator: " ", maxSplits: 1)
                guard let keyword = words.first else { continue }
                extensions[keyword.uppercased()] = words.count > 1 ? String(words[1]) : ""
            }
            return
        }
        guard ehlo.code >= 500 else { throw SMTPFailure(reply: ehlo, during: "EHLO") }
        let helo = try await command("HELO \(configuration.heloName)")
        guard helo.code == 250 else { throw SMTPFailure(reply: helo, during: "HELO") }
        extensions = [:]
    }

    mutating func startTLS() async throws(SMTPFailure) {
        let context = try tls.get()
        let host = configuration.url.host
        let channel = self.channel
        do {
            try await channel.eventLoop.submit {
                let handler = try NIOSSLClientHandler(context: context, serverHostname: SMTPSession.sniName(host))
                try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            }.get()
        } catch {
            throw SMTPFailure(permanent: "could not start TLS: \(error)")
        }
        secure = true
    }

    func authenticate(user: String, password: String) async throws(SMTPFailure) {
        guard let offered = extensions["AUTH"] else {
            throw SMTPFailure(permanent: "the URL has a user, but the server offers no AUTH")
        }
        let mechanisms = Set(offered.uppercased().split(separator: " ").map(String.init))
        guard mechanisms.contains("PLAIN") || mechanisms.contains("LOGIN") else {
            throw SMTPFailure(permanent: "the server offers AUTH \(offered), and Hearth speaks PLAIN and LOGIN")
        }
        if mechanisms.contains("PLAIN") {
            let credentials = [0] + Array(user.utf8) + [0] + Array(password.utf8)
            let answer = try await command("AUTH PLAIN " + base64(credentials), redacted: "AUTH PLAIN")
            guard answer.code == 235 else { throw SMTPFailure(reply: answer, during: "AUTH PLAIN") }
        } else {
            var answer = try await command("AUTH LOGIN")
            guard answer.code == 334 else { throw SMTPFailure(reply: answer, during: "AUTH LOGIN") }
            answer = try await command(base64(Array(user.utf8)), redacted: "AUTH LOGIN user")
            guard answer.code == 334 else { throw SMTPFailure(reply: answer, during: "AUTH LOGIN user") }
            answer = try await command(base64(Array(password.utf8)), redacted: "AUTH LOGIN password")
            guard answer.code == 235 else { throw SMTPFailure(reply: answer, during: "AUTH LOGIN") }
        }
    }

    /// MAIL, RCPT for each recipient, DATA: each recipient's outcome.
    func transact(_ message: [UInt8], from: String, to recipients: [String]) async -> [SMTPClient.Outcome] {
        do {
            let mail = try await command("MAIL FROM:<\(from)>")
            guard mail.code == 250 else { throw SMTPFailure(reply: mail, during: "MAIL FROM") }
            var outcomes: [SMTPClient.Outcome] = []
            for recipient in recipients {
                let rcpt = try await command("RCPT TO:<\(recipient)>")
                outcomes.append(rcpt.code == 250 || rcpt.code == 251 ? .accepted
                                : .failed(SMTPFailure(reply: rcpt, during: "RCPT TO <\(recipient)>")))
            }
            guard outcomes.contains(.accepted) else {
                _ = try? await command("RSET")
                return outcomes
            }
            let data = try await command("DATA")
            guard data.code == 354 else { throw SMTPFailure(reply: data, during: "DATA") }
            channel.write(ByteBuffer(bytes: Self.dotStuffed(message)), promise: nil)
            let done = try await reply(to: "the message", timeout: configuration.dataTimeout, flush: true)
            guard done.code == 250 else { throw SMTPFailure(reply: done, during: "end of DATA") }
            return outcomes
        } catch {
            return recipients.map { _ in .failed(error as? SMTPFailure ?? SMTPFailure(transient: "\(error)")) }
        }
    }

    func quit() async {
        _ = try? await command("QUIT")
        try? await channel.close()
    }

    /// The message with each line that starts with `.` given one more (RFC 5321 §4.5.2), bare LFs made
    /// CRLF, and the final `CRLF.CRLF`.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + message.count / 64 + 5)
        var atLineStart = true
        var previous: UInt8 = 0
        for b in message {
            if b == UInt8(ascii: "\n"), previous != UInt8(ascii: "\r") { out.append(UInt8(ascii: "\r")) }
            if atLineStart, b == UInt8(ascii: ".") { out.append(UInt8(ascii: ".")) }
            out.append(b)
            atLineStart = b == UInt8(ascii: "\n")
            previous = b
        }
        if !atLineStart { out += Array("\r\n".utf8) }
        out += Array(".\r\n".utf8)
        return out
    }

    func command(_ line: String, redacted: String? = nil) async throws(SMTPFailure) -> SMTPReply {
        channel.write(ByteBuffer(string: line + "\r\n"), promise: nil)
        let what = redacted ?? String(line.prefix(while: { $0 != " " && $0 != ":" }))
        return try await reply(to: what, timeout: configuration.commandTimeout, flush: true)
    }

    func reply(to what: String, timeout: TimeAmount, flush: Bool = false) async throws(SMTPFailure) -> SMTPReply {
        let promise = channel.eventLoop.makePromise(of: SMTPReply.self)
        let waiter = self.waiter
        let channel = self.channel
        channel.eventLoop.execute {
            waiter.value.expect(promise, timeout: timeout, what: what)
            if flush { channel.flush() }
        }
        do {
            return try await promise.futureResult.get()
        } catch {
            throw error as? SMTPFailure ?? SMTPFailure(transient: "\(error)")
        }
    }

    private func base64(_ bytes: [UInt8]) -> String { Base64.encode(bytes) }
}
