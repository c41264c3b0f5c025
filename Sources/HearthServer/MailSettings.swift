import HearthCore
import HearthMail
import NIOCore
import NIOSSL

/// Delivery of the outbox over SMTP (`--smtp-url`, `--mail-from`). Without it the outbox goes to the
/// development mailbox file.
public struct MailSettings: Sendable {
    /// The SMTP client's server, timeouts and TLS trust.
    public var smtp: SMTPClient.Configuration
    /// The sender of every message (`From` and the envelope).
    public var from: MailAddress
    /// When failed messages are tried again, and when they are given up on.
    public var retry = RetryPolicy()
    /// Messages sent at once.
    public var concurrency = 4

    /// Settings for a server and a sender, with defaults for the rest.
    public init(url: SMTPURL, from: MailAddress) {
        smtp = SMTPClient.Configuration(url: url)
        self.from = from
    }

    /// Trusts the certificate authorities in a PEM file besides the system's (a private relay's own CA),
    /// checking the file now so that a bad one is an error at start.
    public mutating func trust(caFile path: String) throws(HearthError) {
        smtp.tls.additionalTrustRoots.append(.certificates(try TrustedCertificates.read(caFile: path, setting: "smtpCaFile")))
    }
}
