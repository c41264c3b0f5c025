/// A SQLite file that several parts of the process share: writes run as jobs of its one writer, inside the
/// writer's transactions (so they share its group commit and durability), reads on its own connections.
/// The document store provides it; the accounts' SQLite storage runs on it.
package protocol SQLiteAccess: Sendable {
    /// Runs a job on the writer, inside a transaction shared with other queued jobs; the job's effects are
    /// rolled back alone if it throws. Returns once the commit is durable.
    func writeJob<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T
    /// Runs a read that may scan, on a reader thread.
    func readJob<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T
    /// Runs a short read (a lookup by key) on the calling thread.
    func pointReadJob<T>(_ body: (SQLiteConnection) throws -> T) throws -> T
}
