import HearthAuth
import HearthCore
import HearthMail
import Logging
import Prometheus
import ServiceLifecycle

/// Sends the push queue: every `interval`, the notifications due are sent (a few at once) to APNs or FCM,
/// each then deleted when the service accepted it, its device dropped when the service no longer knows the
/// token, rescheduled by the outbox's `RetryPolicy` after a passing failure (never before the service's
/// `Retry-After`), or marked dead with the reason after a permanent one or too many tries. A batch finishes
/// before the next is read, so no notification is in two attempts at once. Logs never carry a device token,
/// a key or an access token.
struct PushDeliveryService: Service {
    let push: PushService
    let settings: PushSettings
    let interval: Duration
    let metrics: ServerMetrics
    let logger: Logger

    /// The clients of the configured services.
    struct Clients: Sendable {
        let apns: APNsClient?
        let fcm: FCMClient?
    }

    func run() async {
        let clients = Clients(apns: settings.apns.map(APNsClient.init), fcm: settings.fcm.map(FCMClient.init))
        await DeliveryQueue.run(every: interval) { await deliverDue(clients) }
        await clients.apns?.shutdown()
        await clients.fcm?.shutdown()
    }

    /// Sends one batch of due notifications; answers how many were tried.
    func deliverDue(_ clients: Clients) async -> Int {
        await DeliveryQueue.sendDue(concurrency: settings.concurrency, logger: logger, queue: "the push queue") { limit throws(HearthError) in
            try await push.storage.pendingPush(dueBy: push.now(), limit: limit)
        } _: { message in
            await deliver(message, clients)
        }
    }

    func deliver(_ message: PushMessage, _ clients: Clients) async {
        let attempts = message.delivery.attempts + 1
        let meta: Logger.Metadata = ["id": "\(message.id)", "device": "\(message.deviceID)"]
        do {
            guard let device = try await push.storage.device(id: message.deviceID) else {
                // The device was deleted (or its token sealed under a lost key) after the send was queued.
                try await push.storage.deletePush(id: message.id)
                return
            }
            let outcome: PushOutcome
            switch device.platform {
            case .apns:
                outcome = await clients.apns?.send(token: device.token, content: message.content)
                    ?? .failed("APNs is not configured (apnsKey, apnsKeyId, apnsTeamId, apnsTopic)")
            case .fcm:
                outcome = await clients.fcm?.send(token: device.token, content: message.content)
                    ?? .failed("FCM is not configured (fcmCredentials)")
            }
            var details = meta
            details["platform"] = "\(device.platform.rawValue)"
            details["attempts"] = "\(attempts)"
            switch outcome {
            case .delivered:
                try await push.storage.deletePush(id: message.id)
                metrics.pushSent.increment()
                logger.info("push notification sent", metadata: details)
            case .unregistered(let reason):
                _ = try await push.storage.deleteDevice(id: device.id)
                metrics.pushDroppedTokens.increment()
                details["reason"] = "\(reason)"
                logger.notice("push device dropped: the service no longer knows its token", metadata: details)
            case .failed(let reason):
                metrics.pushFailed.increment()
                await bury(message, attempts: attempts, reason: reason, details)
            case .retry(let reason, let after):
                metrics.pushFailed.increment()
                let time = push.now()
                switch settings.retry.afterFailure(attempts: attempts, queuedAt: message.createdAt, now: time,
                                                   random: Double.random(in: 0...1)) {
                case .retry(var at):
                    if let after {
                        at = Timestamp(microseconds: max(at.microseconds, time.microseconds + Int64(after.inSeconds * 1_000_000)))
                    }
                    _ = try await push.storage.updatePushDelivery(id: message.id, OutboxMessage.Delivery(
                        attempts: attempts, nextAttemptAt: at, lastError: reason, deadAt: nil))
                    details["retryAt"] = "\(at.rfc3339)"
                    details["error"] = "\(reason)"
                    logger.warning("push notification not sent; will retry", metadata: details)
                case .dead(let bound):
                    await bury(message, attempts: attempts, reason: "\(reason) (\(bound))", details)
                }
            }
        } catch {
            logger.error("could not record a push notification's delivery", metadata: meta.merging(["error": "\(error.message)"]) { $1 })
        }
    }

    func bury(_ message: PushMessage, attempts: Int, reason: String, _ details: Logger.Metadata) async {
        let time = push.now()
        do {
            _ = try await push.storage.updatePushDelivery(id: message.id, OutboxMessage.Delivery(
                attempts: attempts, nextAttemptAt: time, lastError: reason, deadAt: time))
        } catch {
            logger.error("could not record a dead push notification", metadata: ["id": "\(message.id)", "error": "\(error.message)"])
        }
        metrics.pushDead.increment()
        var details = details
        details["reason"] = "\(reason)"
        logger.error("push notification dead; an operator may retry it (GET /v1/admin/push)", metadata: details)
    }
}
