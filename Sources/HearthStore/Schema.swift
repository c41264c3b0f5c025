import HearthCore
import HearthSQLite

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
        // Accounts and sessions (HearthAuth's `AuthStorage`): tokens only as SHA-256 hashes (32-byte BLOBs),
        // times as microseconds; outbox tokens sealed (see `OutboxSeal`). Cascades are done by
        // `SQLiteAuthStorage` itself, since foreign keys are off on these connections.
        """
        CREATE TABLE auth_users (
            uid TEXT PRIMARY KEY,
            email TEXT,
            email_normalized TEXT UNIQUE,
            password_hash TEXT,
            display_name TEXT,
            email_verified INTEGER NOT NULL,
            anonymous INTEGER NOT NULL,
            claims TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            disabled INTEGER NOT NULL
        );
        CREATE TABLE auth_sessions (
            id TEXT PRIMARY KEY,
            uid TEXT NOT NULL,
            access_hash BLOB NOT NULL UNIQUE,
            access_issued INTEGER NOT NULL,
            access_expires INTEGER NOT NULL,
            refresh_hash BLOB NOT NULL UNIQUE,
            refresh_expires INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            revoked_at INTEGER,
            provider TEXT NOT NULL
        );
        CREATE INDEX auth_sessions_by_uid ON auth_sessions(uid);
        CREATE INDEX auth_sessions_by_refresh_expiry ON auth_sessions(refresh_expires);
        CREATE INDEX auth_sessions_by_revocation ON auth_sessions(revoked_at) WHERE revoked_at IS NOT NULL;
        CREATE TABLE auth_retired_refresh (
            hash BLOB PRIMARY KEY,
            session_id TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX auth_retired_refresh_by_session ON auth_retired_refresh(session_id);
        CREATE TABLE auth_one_time_tokens (
            hash BLOB PRIMARY KEY,
            purpose TEXT NOT NULL,
            uid TEXT NOT NULL,
            email_normalized TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX auth_one_time_tokens_by_uid ON auth_one_time_tokens(uid, purpose);
        CREATE INDEX auth_one_time_tokens_by_expiry ON auth_one_time_tokens(expires_at);
        CREATE TABLE auth_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            purpose TEXT NOT NULL,
            recipient TEXT NOT NULL,
            uid TEXT NOT NULL,
            sealed_token BLOB NOT NULL,
            expires_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX auth_outbox_by_uid ON auth_outbox(uid);
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
        // The revocation log: a row for every session that stops working (revoked, its account disabled, or
        // deleted with its account), written by triggers in the same transaction as the change, whichever
        // process or code path makes it, so that a server tells its listeners of revocations made by
        // another process (`hearth users revoke|delete`) by reading only the rows after the last it read
        // Sessions deleted by the sweeper with their account still there had ended already and are not logged.
        // The newest 10,000 rows are kept. Dropped by a later migration.
        """
        CREATE TABLE auth_revocations (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            uid TEXT NOT NULL,
            session_id TEXT NOT NULL,
            reason TEXT NOT NULL
        );
        CREATE TRIGGER auth_sessions_revoked AFTER UPDATE OF revoked_at ON auth_sessions
        WHEN old.revoked_at IS NULL AND new.revoked_at IS NOT NULL
        BEGIN
            INSERT INTO auth_revocations(uid, session_id, reason) VALUES (new.uid, new.id, 'revoked-by-admin');
        END;
        CREATE TRIGGER auth_users_disabled AFTER UPDATE OF disabled ON auth_users
        WHEN new.disabled AND NOT old.disabled
        BEGIN
            INSERT INTO auth_revocations(uid, session_id, reason)
                SELECT uid, id, 'account-disabled' FROM auth_sessions WHERE uid = new.uid AND revoked_at IS NULL;
        END;
        CREATE TRIGGER auth_sessions_deleted AFTER DELETE ON auth_sessions
        WHEN old.revoked_at IS NULL AND NOT EXISTS (SELECT 1 FROM auth_users WHERE uid = old.uid)
        BEGIN
            INSERT INTO auth_revocations(uid, session_id, reason) VALUES (old.uid, old.id, 'account-deleted');
        END;
        CREATE TRIGGER auth_revocations_trim AFTER INSERT ON auth_revocations
        BEGIN
            DELETE FROM auth_revocations WHERE seq <= new.seq - 10000;
        END;
        """,
        // The composite indexes whose entries the field index holds (by `CompositeIndex.entryField` and
        // collection id): `Store.reconcile` builds entries for new definitions and drops removed ones.
        """
        CREATE TABLE composite_indexes (
            entry_field TEXT NOT NULL,
            collection_id TEXT NOT NULL,
            PRIMARY KEY (entry_field, collection_id)
        ) WITHOUT ROWID;
        """,
        // Collection ids that a nested collection (not a root one) has held a document in. A root
        // collection's query is served from its group's scope in the field index; when no nested
        // collection shares its id, every row there is the root collection's own, and a count need not
        // check each row's path. Rows are never removed (a stale row only costs that check).
        """
        CREATE TABLE nested_groups (
            collection_id TEXT PRIMARY KEY
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO nested_groups SELECT DISTINCT collection_id FROM documents WHERE instr(parent, '/') > 0;
        """,
        // Collections are listed, and collection groups queried, through the field index (its `__name__`
        // entries); only rare start-up work (building a newly declared composite index) reads documents by
        // collection id, and a full scan serves it. Each of these indexes cost every document write one
        // more page written at a random place.
        """
        DROP INDEX documents_by_parent;
        DROP INDEX documents_by_group;
        """,
        // The single-field overrides the field index was last built with (`FieldOverride`; the field as its
        // canonical path), so that a start with changed overrides rebuilds the entries of the collection ids
        // concerned, and only those.
        """
        CREATE TABLE field_overrides (
            collection_id TEXT NOT NULL,
            field TEXT NOT NULL,
            value_entries INTEGER NOT NULL,
            contains_entries INTEGER NOT NULL,
            PRIMARY KEY (collection_id, field)
        ) WITHOUT ROWID;
        """,
        // Written by earlier versions, which could hold index rows in memory: the first change-log sequence
        // whose added field-index rows may not be in the table yet, or NULL (`Store+EarlierIndexRows.swift`).
        """
        CREATE TABLE index_state (
            id INTEGER PRIMARY KEY CHECK (id = 0),
            pending_from INTEGER
        );
        INSERT INTO index_state(id, pending_from) VALUES (0, NULL);
        """,
        // `hearth import`'s progress, committed with each batch it writes (`ImportProgress`).
        """
        CREATE TABLE imports (
            source TEXT PRIMARY KEY,
            head BLOB NOT NULL,
            offset INTEGER NOT NULL,
            line INTEGER NOT NULL,
            before BLOB NOT NULL,
            documents INTEGER NOT NULL,
            finished INTEGER NOT NULL
        );
        """,
        // The revocation log goes: it told a server of revocations that another process wrote to the file, and
        // tools now act through the server that holds the folder, whose listeners hear of revocations at once.
        """
        DROP TRIGGER IF EXISTS auth_sessions_revoked;
        DROP TRIGGER IF EXISTS auth_users_disabled;
        DROP TRIGGER IF EXISTS auth_sessions_deleted;
        DROP TRIGGER IF EXISTS auth_revocations_trim;
        DROP TABLE IF EXISTS auth_revocations;
        """,
        // Stored objects' metadata (`/v1/files`). The bytes live under the data folder's `files/blobs/`, named by
        // their SHA-256; the index finds whether any object still names a blob. Names are UTF-8 bytes (a BLOB),
        // so they sort and compare as Cloud Storage's do and a listing can skip past a common prefix.
        """
        CREATE TABLE files (
            path BLOB PRIMARY KEY,
            generation INTEGER NOT NULL,
            metageneration INTEGER NOT NULL,
            size INTEGER NOT NULL,
            content_type TEXT NOT NULL,
            sha256 BLOB NOT NULL,
            md5 BLOB NOT NULL,
            create_time INTEGER NOT NULL,
            update_time INTEGER NOT NULL,
            metadata BLOB NOT NULL,
            token_hash BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX files_sha256 ON files(sha256);
        """,
        // The outbox delivers by SMTP: app email (`content`, JSON) beside account messages, and each
        // message's delivery state (attempts, when to try next, the last error, when it was given up on).
        """
        ALTER TABLE auth_outbox ADD COLUMN content TEXT;
        ALTER TABLE auth_outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE auth_outbox ADD COLUMN next_attempt_at INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE auth_outbox ADD COLUMN last_error TEXT;
        ALTER TABLE auth_outbox ADD COLUMN dead_at INTEGER;
        CREATE INDEX auth_outbox_due ON auth_outbox(dead_at, next_attempt_at, seq);
        """,
        // Events for function endpoints (`FunctionEventRecord`), each inserted in the commit of the change that
        // caused it and deleted in the commit that records its delivery; a dead one stays, with its reason.
        // Events of one ordering key are delivered one at a time in `seq` order.
        """
        CREATE TABLE function_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            endpoint TEXT NOT NULL,
            ordering_key TEXT NOT NULL,
            body BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            queued_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            last_error TEXT,
            dead_at INTEGER
        );
        CREATE INDEX function_events_pending ON function_events(seq, next_attempt_at) WHERE dead_at IS NULL;
        CREATE INDEX function_events_by_key ON function_events(ordering_key, seq) WHERE dead_at IS NULL;
        CREATE INDEX function_events_dead ON function_events(seq) WHERE dead_at IS NOT NULL;
        """,
        // Push notifications (`PushStorage`): each device's token sealed like the outbox's tokens (`OutboxSeal`)
        // and found by its SHA-256; topics a device is subscribed to; one queued delivery per message and device,
        // with its delivery state like the outbox's.
        """
        CREATE TABLE push_devices (
            id TEXT PRIMARY KEY,
            uid TEXT NOT NULL,
            platform TEXT NOT NULL,
            token_hash BLOB NOT NULL UNIQUE,
            sealed_token BLOB NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX push_devices_by_uid ON push_devices(uid);
        CREATE TABLE push_topics (
            topic TEXT NOT NULL,
            device_id TEXT NOT NULL,
            PRIMARY KEY (topic, device_id)
        ) WITHOUT ROWID;
        CREATE INDEX push_topics_by_device ON push_topics(device_id);
        CREATE TABLE push_queue (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            device_id TEXT NOT NULL,
            content TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            dead_at INTEGER
        );
        CREATE INDEX push_queue_due ON push_queue(dead_at, next_attempt_at, seq);
        CREATE INDEX push_queue_by_device ON push_queue(device_id);
        """,
        // Sessions a server issues for a declared identity (a functions endpoint's, provider `custom`) stand
        // without an account: their claims (wire JSON) are the session's own. NULL for an account's session.
        """
        ALTER TABLE auth_sessions ADD COLUMN claims TEXT;
        """,
        // Function timers armed by documents (one row per timer and document, replaced when the document's field
        // changes, removed when it fires or is dropped), read by due time; and the last slot each schedule fired.
        """
        CREATE TABLE function_timers (
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            due_at INTEGER NOT NULL,
            PRIMARY KEY (name, path)
        ) WITHOUT ROWID;
        CREATE INDEX function_timers_due ON function_timers(due_at);
        CREATE TABLE function_schedules (
            name TEXT PRIMARY KEY,
            spec TEXT NOT NULL,
            last_slot INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // What app email and push sends were made under an `Idempotency-Key` (per kind: `email`, `push`): the
        // request's SHA-256 and the ids it queued, kept a day (pruned by the next keyed send).
        """
        CREATE TABLE send_keys (
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint BLOB NOT NULL,
            ids TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (kind, key)
        ) WITHOUT ROWID;
        CREATE INDEX send_keys_by_time ON send_keys(created_at);
        """,
    ]

    /// The schema version that created the field index.
    static let fieldIndexVersion = 3

    /// Indexes the documents of a database made before the field index existed, in the migration's
    /// transaction, one document at a time.
    static func indexStoredDocuments(_ connection: SQLiteConnection) throws {
        try forEachStoredDocument(on: connection) { path, fields in
            try WriteContext.updateIndex(on: connection, path, removing: [], adding: try IndexEntry.entries(of: fields))
        }
    }

    /// Calls `body` with every stored document's path and fields (of one collection id, when given).
    static func forEachStoredDocument(on connection: SQLiteConnection, collectionID: String? = nil,
                                      _ body: (DocumentPath, [String: Value]) throws -> Void) throws {
        let rows = try connection.prepare(collectionID == nil ? "SELECT path, data FROM documents"
                                          : "SELECT path, data FROM documents WHERE collection_id = ?")
        defer { rows.reset() }
        if let collectionID { rows.bind(1, collectionID) }
        while try rows.step() {
            try body(try DocumentPath(rows.text(0)), try Value.decodeFields(JSON.parse(rows.blob(1))))
        }
    }

    static func migrate(_ connection: SQLiteConnection) throws {
        let current = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard current < migrations.count else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for version in current..<migrations.count {
                try connection.execute(migrations[version])
            }
            if current < fieldIndexVersion { try indexStoredDocuments(connection) }
            try connection.execute("PRAGMA user_version = \(migrations.count)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
