import CSQLite
import CSQLiteWAL
import Synchronization

/// A failure reported by SQLite; never shown to clients (the server logs it and answers `internal`).
package struct SQLiteError: Error, CustomStringConvertible {
    /// SQLite's result code.
    package let code: Int32
    /// SQLite's message.
    package let message: String
    package var description: String { "SQLite error \(code): \(message)" }
}

let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
let SQLITE_STATIC = unsafeBitCast(0, to: sqlite3_destructor_type.self)

/// A statement every connection may prepare, kept by number rather than by its text: the writer's statements
/// run several times per document, and finding one by its text hashes the whole SQL every time.
package struct CachedSQL: Sendable {
    package let sql: String
    let slot: Int
    private static let count = Atomic<Int>(0)

    /// Numbers the statement; make each once (a `static let`).
    package init(_ sql: String) {
        self.sql = sql
        slot = Self.count.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}

/// One SQLite connection with a cache of prepared statements. Used by one thread at a time.
package final class SQLiteConnection: @unchecked Sendable {
    package let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// Statements prepared through `CachedSQL`, by its number.
    private var numbered: [Statement?] = []

    /// Process-wide SQLite settings, applied once before the first connection opens.
    private static let configured: Void = {
        _ = hearth_sqlite3_disable_memstatus()
    }()

    /// Opens (creating if needed) the database file. With `gathersWALWrites`, the connection's WAL appends
    /// are gathered in memory and written with one call per commit (see `wal_buffer.c`): for the one
    /// connection that writes documents, whose commits would otherwise cost two calls per WAL frame.
    package init(path: String, readOnly: Bool = false, gathersWALWrites: Bool = false) throws {
        _ = Self.configured
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        if gathersWALWrites {
            let registered = hearth_wal_buffer_register()
            guard registered == SQLITE_OK else {
                throw SQLiteError(code: registered, message: "cannot register the WAL-gathering file layer")
            }
        }
        let rc = gathersWALWrites ? sqlite3_open_v2(path, &db, flags, HEARTH_WAL_BUFFER_VFS)
            : sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(db)
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 10_000)
    }

    /// What the connections that gather their WAL appends wrote so far in this process: `write` calls to the
    /// WAL file and bytes.
    package static var gatheredWALWrites: (writes: Int64, bytes: Int64) {
        var writes: Int64 = 0, bytes: Int64 = 0
        hearth_wal_buffer_statistics(&writes, &bytes)
        return (writes, bytes)
    }

    deinit {
        statements.removeAll()
        numbered.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs `body` with SQLite's work bounded: once SQLite has run about `instructions` virtual-machine
    /// instructions, the statement being stepped fails with `SQLITE_INTERRUPT`, and so does every later one
    /// until `body` returns. Returns `body`'s value and whether the bound was reached (then the value may
    /// rest on interrupted statements and must not be used).
    package func withInstructionLimit<T>(_ instructions: Int, _ body: () throws -> T) -> (Result<T, any Error>, exceeded: Bool) {
        let left = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        left.initialize(to: instructions / Self.progressInterval)
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            left.deallocate()
        }
        sqlite3_progress_handler(handle, Int32(Self.progressInterval), { context in
            let left = context!.assumingMemoryBound(to: Int.self)
            left.pointee -= 1
            return left.pointee < 0 ? 1 : 0
        }, left)
        let result = Result { try body() }
        return (result, left.pointee < 0)
    }

    /// Instructions between two calls of the progress handler that `withInstructionLimit` installs.
    static let progressInterval = 100

    package func error(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs one or more statements without results.
    package func execute(_ sql: String) throws {
        var errmsg: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errmsg)
        if rc != SQLITE_OK {
            let message = errmsg.map { String(cString: $0) } ?? "unknown"
            sqlite3_free(errmsg)
            throw SQLiteError(code: rc, message: message)
        }
    }

    /// Prepared statements a connection keeps; past it, the cache starts over. Statements differ by query
    /// shape, not by document, so this is seldom reached.
    static let maxCachedStatements = 512

    /// A cached prepared statement for the SQL, reset and with bindings cleared.
    package func prepare(_ sql: String) throws -> Statement {
        if let s = statements[sql] {
            s.reset()
            return s
        }
        // A statement still in a caller's hands stays valid: it is finalized when the last reference goes.
        if statements.count >= Self.maxCachedStatements { statements.removeAll() }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc) }
        let s = Statement(connection: self, stmt: stmt)
        statements[sql] = s
        return s
    }

    /// `prepare(_:)` for a numbered statement: found without hashing its text.
    package func prepare(_ cached: CachedSQL) throws -> Statement {
        if cached.slot < numbered.count, let s = numbered[cached.slot] {
            s.reset()
            return s
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, cached.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc) }
        let s = Statement(connection: self, stmt: stmt)
        if cached.slot >= numbered.count { numbered += Array(repeating: nil, count: cached.slot + 1 - numbered.count) }
        numbered[cached.slot] = s
        return s
    }

    /// Rows changed by the last statement.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last insert.
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Reads a single integer (PRAGMA results, counts).
    package func scalarInt(_ sql: String) throws -> Int64? {
        let s = try prepare(sql)
        defer { s.reset() }
        return try s.step() ? s.int(0) : nil
    }
}

/// A prepared statement. Bind parameters are 1-based, columns 0-based.
package final class Statement: @unchecked Sendable {
    unowned let connection: SQLiteConnection
    let stmt: OpaquePointer
    /// Where `bindKept` copies the values it binds, so that SQLite need not allocate a copy of each; reused
    /// once the statement is reset. Allocated on the first such bind.
    private var kept: UnsafeMutableRawBufferPointer?
    private var keptUsed = 0
    static let keptBytes = 16 << 10

    init(connection: SQLiteConnection, stmt: OpaquePointer) {
        self.connection = connection
        self.stmt = stmt
    }

    deinit {
        sqlite3_finalize(stmt)
        kept?.deallocate()
    }

    /// Resets the statement and clears its bindings.
    package func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        keptUsed = 0
    }

    /// Copies `bytes` where the statement keeps its bound values until it is reset, or nil when they do not fit.
    private func keep(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        if kept == nil { kept = .allocate(byteCount: Self.keptBytes, alignment: 8) }
        guard let kept, bytes.count <= kept.count - keptUsed else { return nil }
        let at = kept.baseAddress! + keptUsed
        at.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        keptUsed += bytes.count
        return UnsafeRawPointer(at)
    }

    /// `bind(_:_:)` of a text for the statements every document write runs (its row, its change, its index
    /// rows): the bytes are copied into the statement's own buffer instead of a new allocation of SQLite's for
    /// each; values that do not fit there are bound as `bind` binds them.
    package func bindKept(_ index: Int32, _ text: String) {
        var bytesOf = text
        bytesOf.withUTF8 { bytes in
            guard !bytes.isEmpty, let at = keep(UnsafeRawBufferPointer(bytes)) else { return bind(index, text) }
            _ = sqlite3_bind_text(stmt, index, at.assumingMemoryBound(to: CChar.self), Int32(bytes.count), SQLITE_STATIC)
        }
    }

    /// `bind(_:_:)` of a blob, copied as `bindKept(_:_:)` copies a text.
    package func bindKept(_ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            guard raw.count > 0, let at = keep(raw) else { return bind(index, bytes) }
            _ = sqlite3_bind_blob(stmt, index, at, Int32(raw.count), SQLITE_STATIC)
        }
    }

    /// Binds a text value, all of its bytes: with a length of -1 SQLite would stop at the first NUL, so that
    /// field names differing after one would share index rows.
    /// A native string's bytes are bound where they lie (SQLite copies them): passed as a C string, Swift
    /// would first copy every one into a new array.
    package func bind(_ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                _ = sqlite3_bind_text(stmt, index, "", 0, SQLITE_TRANSIENT)  // '', not NULL
                return
            }
            base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                _ = sqlite3_bind_text(stmt, index, $0, Int32(bytes.count), SQLITE_TRANSIENT)
            }
        }
    }

    /// The statement's number of parameters.
    package var parameterCount: Int32 { sqlite3_bind_parameter_count(stmt) }

    /// Binds an integer.
    package func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(stmt, index, value)
    }

    /// Binds a blob (empty blobs bind as zero-length, not NULL).
    package func bind(_ index: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { raw in
            raw.count == 0 ? sqlite3_bind_zeroblob(stmt, index, 0)
                : sqlite3_bind_blob(stmt, index, raw.baseAddress, Int32(raw.count), SQLITE_TRANSIENT)
        }
    }

    /// Binds NULL.
    package func bindNull(_ index: Int32) {
        sqlite3_bind_null(stmt, index)
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    package func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let err = connection.error(rc)
        sqlite3_reset(stmt)
        throw err
    }

    /// Runs to completion, ignoring rows. The bindings stay until the next `prepare` clears them (a statement
    /// run again without one is bound again first), so they are not cleared twice.
    package func run() throws {
        while try step() {}
        sqlite3_reset(stmt)
    }

    /// An integer column.
    package func int(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }

    /// True when the column is NULL.
    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(stmt, column) == SQLITE_NULL }

    /// A text column.
    package func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, column) else { return "" }
        let n = Int(sqlite3_column_bytes(stmt, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// A blob column, copied out.
    package func blob(_ column: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(stmt, column))
        guard n > 0, let p = sqlite3_column_blob(stmt, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}
