import Foundation
import HearthSQLite

/// Connections any thread may borrow for a moment.
final class ConnectionPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: [SQLiteConnection]

    init(_ connections: [SQLiteConnection]) { free = connections }

    func with<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        condition.lock()
        while free.isEmpty { condition.wait() }
        let connection = free.removeLast()
        condition.unlock()
        defer {
            condition.lock()
            free.append(connection)
            condition.signal()
            condition.unlock()
        }
        return try body(connection)
    }
}
