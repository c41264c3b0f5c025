import HearthAuth
import HearthCore
import HearthMail
import Logging
import ServiceLifecycle

/// Sends the outbox over SMTP: every `interval`, the messages due are sent (a few at once), each one then
/// deleted when the server accepted it (never sent again), rescheduled by the retry policy after a passing
/// failure, or marked dead with the reason after a permanent one or too many tries. A batch finishes before
/// the next is read, so no message is in two attempts at once. Logs never carry a token.
struct MailDeliveryService: Service {
    let auth: AuthService
    let settings: MailSettings
    let accountMail: AccountMail
    let interval: Duration
    let logger: Logger

    func run() async {
        let client = SMTPClient(configuration: settings.smtp)
        await DeliveryQueue.run(every: interval) { await deliverDue(client) }
    }

    /// Sends one batch of due messages; answers how many were tried.
    func deliverDue(_ client: SMTPClient) async -> Int {
        await DeliveryQueue.sendDue(concurrency: settings.concurrency, logger: logger, queue: "the outbox") { limit throws(HearthError) in
            try await auth.dueOutbox(limit: limit)
        } _: { message in
            await deliver(message, client)
        }
    }

    func deliver(_ message: OutboxMessage, _ client: SMTPClient) async {
        let time = auth.now()
        let attempts = message.delivery.attempts + 1
        if message.purpose != .email, message.expiresAt <= time {
            return await bury(message, attempts: attempts, reason: "the link expired before it could be sent")
        }
        let bytes: [UInt8]
        do {
            bytes = try OutboxMail.message(for: message, from: settings.from, accountMail: accountMail).render()
        } catch {
            return await bury(message, attempts: attempts, reason: "could not be written: \(error.message)")
        }
        let outcome = await client.send(bytes, from: settings.from.address, to: [message.to]).first ?? .accepted
        do {
            switch outcome {
            case .accepted:
                try await auth.outboxDelivered(id: message.id)
                logger.info("message sent", metadata: ["id": "\(message.id)", "purpose": "\(message.purpose.rawValue)",
                                                        "to": "\(message.to)", "attempts": "\(attempts)"])
            case .failed(let failure) where failure.permanent:
                await bury(message, attempts: attempts, reason: failure.message)
            case .failed(let failure):
                switch settings.retry.afterFailure(attempts: attempts, queuedAt: message.createdAt, now: time,
                                                   random: Double.random(in: 0...1)) {
                case .retry(let at):
                    try await auth.recordOutboxDelivery(id: message.id, OutboxMessage.Delivery(
                        attempts: attempts, nextAttemptAt: at, lastError: failure.message, deadAt: nil))
                    logger.warning("message not sent; will retry", metadata: [
                        "id": "\(message.id)", "to": "\(message.to)", "attempts": "\(attempts)",
                        "retryAt": "\(at.rfc3339)", "error": "\(failure.message)"])
                case .dead(let reason):
                    await bury(message, attempts: attempts, reason: "\(failure.message) (\(reason))")
                }
            }
        } catch {
            logger.error("could not record a message's delivery", metadata: ["id": "\(message.id)", "error": "\(error.message)"])
        }
    }

    func bury(_ message: OutboxMessage, attempts: Int, reason: String) async {
        let time = auth.now()
        do {
            try await auth.recordOutboxDelivery(id: message.id, OutboxMessage.Delivery(
                attempts: attempts, nextAttemptAt: time, lastError: reason, deadAt: time))
        } catch {
            logger.error("could not record a dead message", metadata: ["id": "\(message.id)", "error": "\(error.message)"])
        }
        logger.error("message dead; an operator may retry it (GET /v1/admin/outbox)", metadata: [
            "id": "\(message.id)", "purpose": "\(message.purpose.rawValue)", "to": "\(message.to)", "reason": "\(reason)"])
    }
}
