import HearthCore
import HearthSQLite
import Logging

/// Earlier versions could hold the field-index rows of acknowledged writes in memory and add them to the
/// index later, marking `index_state.pending_from` (the first change-log sequence whose rows might be missing)
/// until they had. A data folder such a server left after an unclean stop still lacks those rows; opening it
/// adds them back once. No write of this version sets the mark.
extension Store {
    /// `index_state.pending_from` (nil when NULL).
    static func pendingFrom(on connection: SQLiteConnection) throws -> Int64? {
        let s = try connection.prepare("SELECT pending_from FROM index_state")
        defer { s.reset() }
        return try s.step() && !s.isNull(0) ? s.int(0) : nil
    }

    /// Adds again the index rows of every document changed at or after the mark, from the stored documents.
    /// Rows already there are kept (`INSERT OR IGNORE`), and rows made stale were removed by the writes
    /// themselves. `clearing`: the mark is cleared afterwards (by the folder's owner, `DataFolderLock`).
    static func restoreRowsHeldByAnEarlierVersion(on connection: SQLiteConnection, composites: CompositeIndexes,
                                                  clearing: Bool, logger: Logger) throws {
        guard let from = try pendingFrom(on: connection) else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let paths = try connection.prepare("SELECT DISTINCT path FROM changes WHERE seq >= ?")
            paths.bind(1, from)
            var all: [DocumentPath] = []
            while try paths.step() {
                all.append(DocumentPath(uncheckedSegments: paths.text(0).split(separator: "/", omittingEmptySubsequences: false).map(String.init)))
            }
            paths.reset()
            let reader = ReadContext(connection: connection, composites: composites)
            for path in all {
                guard let fields = try reader.document(at: path)?.decoded().fields else { continue }
                let entries = try WriteContext.entries(of: fields, at: path, composites: composites, limit: .max)
                try WriteContext.updateIndex(on: connection, path, removing: [], adding: entries)
            }
            if clearing { try connection.execute("UPDATE index_state SET pending_from = NULL") }
            try connection.execute("COMMIT")
            logger.info("index entries restored for documents changed before an unclean stop", metadata: ["documents": "\(all.count)"])
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
