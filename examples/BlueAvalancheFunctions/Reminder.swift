import Foundation
import HearthCore
import HearthFunctions

/// The daily reminder: each run of the `dailyReminder` schedule finds the users whose reminder hour has just
/// begun where they live and sends each a push.
struct Reminder: Sendable {
    let settings: BlueAvalancheSettings

    func remind(_ event: FunctionEvent) async throws {
        guard let token = event.auth?.token else {
            throw ServiceError(description: "the event carries no token: give the endpoint an identity in functions.json")
        }
        // The slot's time, not the delivery's: a late or retried run still reminds the users of its own slot.
        guard let slot = event.time else { return }
        let reader = AppReader(settings, token: token)
        var due: [String] = []
        for (hour, zones) in ReminderSlots.zonesByLocalHour(at: slot).sorted(by: { $0.key < $1.key }) {
            for start in stride(from: 0, to: zones.count, by: 30) {
                due += try await reader.users(remindedAt: hour, in: Array(zones[start..<min(start + 30, zones.count)]))
            }
        }
        // A failure throws and the run is delivered again; each push is keyed by the run and the user, so the
        // users reminded before the failure are not pushed twice.
        for uid in due { try await reader.remind(uid, key: "\(event.id):\(uid)") }
    }
}
