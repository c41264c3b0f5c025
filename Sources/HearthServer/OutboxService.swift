import HearthAuth
import HearthCore
import Logging
import ServiceLifecycle

/// Delivers the accounts' outbox (password-reset and verification messages) into the `OutboxFile`,
/// every `interval`, and once more on shutdown before the store closes. Logs say a message went out and
/// to whom, never its token.
struct OutboxService: Service {
    let auth: AuthService
    let mailbox: OutboxFile
    let accountMail: AccountMail
    let interval: Duration
    let logger: Logger

    func run() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await deliver()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
        await deliver()
    }

    func deliver() async {
        let mailbox = self.mailbox
        let accountMail = self.accountMail
        let logger = self.logger
        do {
            try await auth.deliverOutbox { message in
                guard mailbox.append(message, content: accountMail.content(for: message)) else {
                    logger.error("could not write an outbox message; will retry",
                                 metadata: ["file": "\(mailbox.path)", "purpose": "\(message.purpose.rawValue)"])
                    return false
                }
                logger.info("outbox message delivered", metadata: [
                    "purpose": "\(message.purpose.rawValue)", "to": "\(message.to)", "uid": "\(message.uid)",
                    "file": "\(mailbox.path)",
                ])
                return true
            }
        } catch {
            logger.error("outbox delivery failed", metadata: ["error": "\(error.message)"])
        }
    }
}
