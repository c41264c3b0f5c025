/// The database schema, created and upgraded by numbered migrations (`PRAGMA user_version`).
enum Schema {
    /// Each entry upgrades the schema by one version; never edit a shipped entry, add a new one.
    static let migrations: [String] = [
        """
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            parent TEXT NOT NULL,
            collection_id TEXT NOT NULL,
            data BLOB NOT NULL,
            create_time INTEGER NOT NULL,
            update_time INTEGER NOT NULL
        );
        CREATE INDEX documents_by_parent ON documents(parent, path);
        CREATE INDEX documents_by_group ON documents(collection_id, path);
        CREATE TABLE changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            commit_time INTEGER NOT NULL,
            path TEXT NOT NULL,
            data BLOB,
            create_time INTEGER,
            update_time INTEGER
        );
        """,
        // The field index (see IndexEntry): one row per indexed value of a document, in the scope of its
        // collection ("c" + collection path) and of its collection group ("g" + collection id).
        """
        CREATE TABLE field_index (
            scope TEXT NOT NULL,
            field TEXT NOT NULL,
            key BLOB NOT NULL,
            doc BLOB NOT NULL,
            PRIMARY KEY (scope, field, key, doc)
        ) WITHOUT ROWID;
        """,
    ]

    static func migrate(_ connection: SQLiteConnection) throws {
        let current = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard current < migrations.count else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for version in current..<migrations.count {
                try connection.execute(migrations[version])
            }
            try connection.execute("PRAGMA user_version = \(migrations.count)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
