import Foundation
import HearthAuth
import HearthEngine
import HearthStore

/// The functions file a tool that writes a data folder with no server running (`hearth users`, `hearth
/// fixtures load`) matches its changes against, so that the accounts and files it makes record their events
/// as the server would: `--functions`, else `HEARTH_FUNCTIONS`; none records nothing.
enum OfflineFunctions {
    static let help = "The functions file whose triggers record events for what is written with no server running (default $HEARTH_FUNCTIONS)."

    /// The file in force for the tool (empty when none is named).
    static func load(_ option: String?) throws -> FunctionsInForce {
        let functions = FunctionsInForce()
        if let path = option ?? ProcessInfo.processInfo.environment["HEARTH_FUNCTIONS"], !path.isEmpty {
            try functions.load(file: path)
        }
        return functions
    }

    /// The account storage over a store the tool holds, queueing the events of `functions`.
    static func accounts(_ store: Store, _ functions: FunctionsInForce) -> SQLiteAuthStorage {
        SQLiteAuthStorage(file: store, events: SQLiteAccountEvents(functions: functions))
    }
}
