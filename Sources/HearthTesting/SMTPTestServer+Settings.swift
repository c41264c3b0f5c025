import HearthMail
import HearthServer

extension SMTPTestServer {
    /// Mail settings sending to this server over plain SMTP from `no-reply@hearth.test`, with quick retries.
    public func mailSettings() throws -> MailSettings {
        var mail = MailSettings(url: try SMTPURL("smtp://127.0.0.1:\(port)"), from: try MailAddress("no-reply@hearth.test", displayName: "Hearth"))
        mail.retry = RetryPolicy(initialDelay: .milliseconds(50), maxDelay: .milliseconds(200), maxAttempts: 1000, maxAge: .seconds(3600))
        return mail
    }
}
