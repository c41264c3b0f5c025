import Foundation
import HearthFunctions

/// Blue Avalanche's functions (docs/apps/blue-avalanche.md), apart from `main.swift` so the tests serve the
/// same ones: the `publishPost` timer and the `dailyReminder` schedule of `functions.json`.
enum BlueAvalancheHandlers {
    static func functions(_ settings: BlueAvalancheSettings) -> Functions {
        var functions = Functions()
        functions.onTimer("publishPost") { event in try await Publisher(settings: settings).publish(event) }
        functions.onSchedule("dailyReminder") { event in try await Reminder(settings: settings).remind(event) }
        return functions
    }
}
