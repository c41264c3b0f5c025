import HearthSQLite

/// The store's file for other SQLite storage in the process (the accounts'): its jobs run on the store's
/// writer and readers, so they share the documents' group commit and durability.
extension Store: SQLiteAccess {
    package func writeJob<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await write { context in try body(context.connection) }
    }

    package func readJob<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await read { context in try body(context.connection) }
    }

    package func pointReadJob<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try pointRead { context in try body(context.connection) }
    }
}
