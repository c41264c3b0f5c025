import HearthAuth
import HearthCore
import HearthSQLite
import HearthStore

/// Queues the events of accounts made and deleted, matched against the functions file in force, in the
/// account change's own job on the store's writer: the account and its events commit together.
package struct SQLiteAccountEvents: AccountEventQueue {
    let functions: FunctionsInForce

    package init(functions: FunctionsInForce) { self.functions = functions }

    package func queue(_ change: AccountChange, _ user: UserRecord, at time: Timestamp, on connection: SQLiteConnection) throws {
        guard let file = functions.file, file.watchesAccounts else { return }
        let events = file.accountEvents(change, user: user, time: time, makeID: FunctionsFile.makeEventID)
        if !events.isEmpty { try WriteContext.addFunctionEvents(events, on: connection) }
    }

    package func committed() { functions.committedEvents() }
}
