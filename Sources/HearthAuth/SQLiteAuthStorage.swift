import HearthCore
import HearthSQLite
import Logging

/// `AuthStorage` on the store's SQLite file. Writes go through the store's one writer (`SQLiteAccess`), so
/// they share the documents' group commit and durability: a revocation is acknowledged only once it is
/// committed, and every reader (every request of the process) sees it from then on. Lookups by key are
/// point reads on the calling thread; scans (`listUsers`, `sessions(uid:)`) use the reader threads.
///
/// Atomicity comes from the single writer: each method's checks and changes run in one job of the
/// writer's transaction, which nothing else interleaves with.
package final class SQLiteAuthStorage: AuthStorage {
    /// The file underneath, shared with the document store.
    let file: any SQLiteAccess
    let seal: OutboxSeal
    let logger: Logger
    /// Queues the events of accounts made and deleted, in the same job as the change.
    let events: (any AccountEventQueue)?

    /// Makes the storage over an open store's file. `seal` encrypts one-time tokens waiting in the outbox;
    /// `events` queues the events of accounts made and deleted (nil: none).
    package init(file: any SQLiteAccess, seal: OutboxSeal = OutboxSeal(), logger: Logger = Logger(label: "hearth.auth"),
                 events: (any AccountEventQueue)? = nil) {
        self.file = file
        self.seal = seal
        self.logger = logger
        self.events = events
    }

    static let userColumns = """
        uid, email, email_normalized, password_hash, display_name, email_verified, anonymous, claims, \
        created_at, disabled
        """
    static let sessionColumns = """
        id, uid, access_hash, access_issued, access_expires, refresh_hash, refresh_expires, created_at, \
        revoked_at, provider, claims
        """

    // MARK: Users

    package func insertUser(_ user: UserRecord) async throws(HearthError) {
        try await writing { [events] c in
            if try Self.exists(c, "SELECT 1 FROM auth_users WHERE uid = ?", user.uid) {
                throw HearthError.alreadyExists("An account with uid \(user.uid) already exists.")
            }
            if let email = user.emailNormalized,
               try Self.exists(c, "SELECT 1 FROM auth_users WHERE email_normalized = ?", email) {
                throw HearthError.alreadyExists("The email address is already in use by another account.")
            }
            let s = try c.prepare("INSERT INTO auth_users(\(Self.userColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            Self.bindUser(s, user)
            try s.run()
            try events?.queue(.created, user, at: user.createdAt, on: c)
        }
        events?.committed()
    }

    package func user(uid: String) async throws(HearthError) -> UserRecord? {
        try pointReading { c in
            try Self.oneUser(c, "SELECT \(Self.userColumns) FROM auth_users WHERE uid = ?", uid)
        }
    }

    package func user(emailNormalized: String) async throws(HearthError) -> UserRecord? {
        try pointReading { c in
            try Self.oneUser(c, "SELECT \(Self.userColumns) FROM auth_users WHERE email_normalized = ?", emailNormalized)
        }
    }

    package func updateUser(_ user: UserRecord) async throws(HearthError) {
        try await writing { c in
            guard try Self.exists(c, "SELECT 1 FROM auth_users WHERE uid = ?", user.uid) else {
                throw HearthError.notFound("No account with uid \(user.uid).")
            }
            if let email = user.emailNormalized {
                let s = try c.prepare("SELECT uid FROM auth_users WHERE email_normalized = ?")
                defer { s.reset() }
                s.bind(1, email)
                if try s.step(), s.text(0) != user.uid {
                    throw HearthError.alreadyExists("The email address is already in use by another account.")
                }
            }
            // Same column order as the insert: the uid binds first, then every other column, then the key.
            let s = try c.prepare("""
                UPDATE auth_users SET uid = ?, email = ?, email_normalized = ?, password_hash = ?, display_name = ?,
                    email_verified = ?, anonymous = ?, claims = ?, created_at = ?, disabled = ? WHERE uid = ?
                """)
            Self.bindUser(s, user)
            s.bind(11, user.uid)
            try s.run()
        }
    }

    package func deleteUser(uid: String) async throws(HearthError) -> [String]? {
        defer { events?.committed() }
        return try await writing { [events] c -> [String]? in
            guard let user = try Self.oneUser(c, "SELECT \(Self.userColumns) FROM auth_users WHERE uid = ?", uid) else {
                return nil
            }
            let live = try Self.strings(c, "SELECT id FROM auth_sessions WHERE uid = ? AND revoked_at IS NULL ORDER BY id", uid)
            // The account goes first: the revocation log's trigger tells a deleted account's sessions from
            // swept ones by the account being gone.
            for sql in [
                "DELETE FROM auth_users WHERE uid = ?",
                "DELETE FROM auth_retired_refresh WHERE session_id IN (SELECT id FROM auth_sessions WHERE uid = ?)",
                "DELETE FROM auth_sessions WHERE uid = ?",
                "DELETE FROM auth_one_time_tokens WHERE uid = ?",
                "DELETE FROM auth_outbox WHERE uid = ?",
            ] {
                let s = try c.prepare(sql)
                s.bind(1, uid)
                try s.run()
            }
            try Self.deleteDevices(c, uid: uid)
            try events?.queue(.deleted, user, at: Timestamp.now(), on: c)
            return live
        }
    }

    package func listUsers(after afterUID: String?, limit: Int) async throws(HearthError) -> [UserRecord] {
        try await reading { c in
            // TEXT compares with memcmp (BINARY collation): UTF-8 byte order, as the protocol asks.
            let s = try c.prepare(afterUID == nil
                ? "SELECT \(Self.userColumns) FROM auth_users ORDER BY uid LIMIT ?"
                : "SELECT \(Self.userColumns) FROM auth_users WHERE uid > ? ORDER BY uid LIMIT ?")
            defer { s.reset() }
            if let afterUID {
                s.bind(1, afterUID)
                s.bind(2, Int64(max(0, limit)))
            } else {
                s.bind(1, Int64(max(0, limit)))
            }
            var out: [UserRecord] = []
            while try s.step() { out.append(try Self.decodeUser(s)) }
            return out
        }
    }

    // MARK: Sessions

    package func insertSession(_ session: SessionRecord) async throws(HearthError) {
        try await writing { c in
            let s = try c.prepare(
                "INSERT INTO auth_sessions(\(Self.sessionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            s.bind(1, session.id)
            s.bind(2, session.uid)
            s.bind(3, session.accessTokenHash.bytes)
            s.bind(4, session.accessIssuedAt.microseconds)
            s.bind(5, session.accessExpires.microseconds)
            s.bind(6, session.refreshTokenHash.bytes)
            s.bind(7, session.refreshExpires.microseconds)
            s.bind(8, session.createdAt.microseconds)
            if let revoked = session.revokedAt { s.bind(9, revoked.microseconds) } else { s.bindNull(9) }
            s.bind(10, session.provider.rawValue)
            if let claims = session.claims {
                s.bind(11, String(decoding: Value.encodeFields(claims), as: UTF8.self))
            } else {
                s.bindNull(11)
            }
            try s.run()
        }
    }

    package func session(id: String) async throws(HearthError) -> SessionRecord? {
        try pointReading { c in
            try Self.oneSession(c, "SELECT \(Self.sessionColumns) FROM auth_sessions WHERE id = ?") { $0.bind(1, id) }
        }
    }

    package func session(accessTokenHash: TokenHash) async throws(HearthError) -> SessionRecord? {
        try pointReading { c in
            try Self.oneSession(c, "SELECT \(Self.sessionColumns) FROM auth_sessions WHERE access_hash = ?") {
                $0.bind(1, accessTokenHash.bytes)
            }
        }
    }

    package func sessionWithUser(accessTokenHash: TokenHash) throws(HearthError) -> (SessionRecord, UserRecord?)? {
        try pointReading { c -> (SessionRecord, UserRecord?)? in
            let s = try c.prepare("""
                SELECT s.id, s.uid, s.access_hash, s.access_issued, s.access_expires, s.refresh_hash, s.refresh_expires,
                    s.created_at, s.revoked_at, s.provider, s.claims, u.uid, u.email, u.email_normalized, u.password_hash,
                    u.display_name, u.email_verified, u.anonymous, u.claims, u.created_at, u.disabled
                FROM auth_sessions s LEFT JOIN auth_users u ON u.uid = s.uid WHERE s.access_hash = ?
                """)
            defer { s.reset() }
            s.bind(1, accessTokenHash.bytes)
            guard try s.step() else { return nil }
            return (try Self.decodeSession(s), s.isNull(11) ? nil : try Self.decodeUser(s, from: 11))
        }
    }

    package func session(refreshTokenHash: TokenHash) async throws(HearthError) -> SessionRecord? {
        try pointReading { c in
            try Self.oneSession(c, "SELECT \(Self.sessionColumns) FROM auth_sessions WHERE refresh_hash = ?") {
                $0.bind(1, refreshTokenHash.bytes)
            }
        }
    }

    package func session(retiredRefreshHash: TokenHash) async throws(HearthError) -> SessionRecord? {
        try pointReading { c in
            try Self.oneSession(c, """
                SELECT \(Self.sessionColumns) FROM auth_sessions
                WHERE id = (SELECT session_id FROM auth_retired_refresh WHERE hash = ?)
                """) { $0.bind(1, retiredRefreshHash.bytes) }
        }
    }

    package func rotateSession(id: String, from current: TokenHash, to rotation: SessionRotation)
        async throws(HearthError) -> SessionRecord? {
        try await writing { c -> SessionRecord? in
            // Compare-and-swap: only the holder of the current refresh hash of a live session wins.
            let s = try c.prepare("""
                UPDATE auth_sessions SET access_hash = ?, access_issued = ?, access_expires = ?, refresh_hash = ?,
                    refresh_expires = ?
                WHERE id = ? AND refresh_hash = ? AND revoked_at IS NULL
                """)
            s.bind(1, rotation.accessTokenHash.bytes)
            s.bind(2, rotation.accessIssuedAt.microseconds)
            s.bind(3, rotation.accessExpires.microseconds)
            s.bind(4, rotation.refreshTokenHash.bytes)
            s.bind(5, rotation.refreshExpires.microseconds)
            s.bind(6, id)
            s.bind(7, current.bytes)
            try s.run()
            guard c.changes == 1 else { return nil }
            let retire = try c.prepare("INSERT OR REPLACE INTO auth_retired_refresh(hash, session_id) VALUES (?, ?)")
            retire.bind(1, current.bytes)
            retire.bind(2, id)
            try retire.run()
            return try Self.oneSession(c, "SELECT \(Self.sessionColumns) FROM auth_sessions WHERE id = ?") { $0.bind(1, id) }
        }
    }

    package func revokeSession(id: String, at time: Timestamp) async throws(HearthError) -> Bool {
        try await writing { c -> Bool in
            let s = try c.prepare(
                "UPDATE auth_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
            s.bind(1, time.microseconds)
            s.bind(2, id)
            try s.run()
            return c.changes == 1
        }
    }

    package func revokeSessions(uid: String, except keep: String?, at time: Timestamp) async throws(HearthError) -> [String] {
        try await writing { c -> [String] in
            var ids = try Self.strings(c, "SELECT id FROM auth_sessions WHERE uid = ? AND revoked_at IS NULL ORDER BY id", uid)
            if let keep { ids.removeAll { $0 == keep } }
            let s = try c.prepare("UPDATE auth_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
            for id in ids {
                s.bind(1, time.microseconds)
                s.bind(2, id)
                try s.run()
            }
            return ids
        }
    }

    package func sessions(uid: String) async throws(HearthError) -> [SessionRecord] {
        try await reading { c in
            let s = try c.prepare("SELECT \(Self.sessionColumns) FROM auth_sessions WHERE uid = ? ORDER BY id")
            defer { s.reset() }
            s.bind(1, uid)
            var out: [SessionRecord] = []
            while try s.step() { out.append(try Self.decodeSession(s)) }
            return out
        }
    }

    package func deleteSessions(endedBefore cutoff: Timestamp) async throws(HearthError) -> Int {
        try await writing { c -> Int in
            let ended = "SELECT id FROM auth_sessions WHERE refresh_expires < ?1 OR revoked_at < ?1"
            let retired = try c.prepare("DELETE FROM auth_retired_refresh WHERE session_id IN (\(ended))")
            retired.bind(1, cutoff.microseconds)
            try retired.run()
            let s = try c.prepare("DELETE FROM auth_sessions WHERE refresh_expires < ?1 OR revoked_at < ?1")
            s.bind(1, cutoff.microseconds)
            try s.run()
            return c.changes
        }
    }

    // MARK: One-time tokens

    package func replaceOneTimeToken(_ token: OneTimeTokenRecord, queueing message: OutboxMessage) async throws(HearthError) {
        let sealed = seal.seal(message.token)
        try await writing { c in
            let old = try c.prepare("DELETE FROM auth_one_time_tokens WHERE uid = ? AND purpose = ?")
            old.bind(1, token.uid)
            old.bind(2, token.purpose.rawValue)
            try old.run()
            let s = try c.prepare("""
                INSERT OR REPLACE INTO auth_one_time_tokens(hash, purpose, uid, email_normalized, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
            s.bind(1, token.tokenHash.bytes)
            s.bind(2, token.purpose.rawValue)
            s.bind(3, token.uid)
            s.bind(4, token.emailNormalized)
            s.bind(5, token.createdAt.microseconds)
            s.bind(6, token.expiresAt.microseconds)
            try s.run()
            try Self.insertOutbox(c, message, sealed: sealed)
        }
    }

    package func oneTimeToken(hash: TokenHash, purpose: OneTimeTokenRecord.Purpose)
        async throws(HearthError) -> OneTimeTokenRecord? {
        try pointReading { c -> OneTimeTokenRecord? in
            let s = try c.prepare("""
                SELECT uid, email_normalized, created_at, expires_at FROM auth_one_time_tokens WHERE hash = ? AND purpose = ?
                """)
            defer { s.reset() }
            s.bind(1, hash.bytes)
            s.bind(2, purpose.rawValue)
            guard try s.step() else { return nil }
            return OneTimeTokenRecord(tokenHash: hash, purpose: purpose, uid: s.text(0), emailNormalized: s.text(1),
                                      createdAt: Timestamp(microseconds: s.int(2)), expiresAt: Timestamp(microseconds: s.int(3)))
        }
    }

    package func consumeOneTimeToken(hash: TokenHash, purpose: OneTimeTokenRecord.Purpose)
        async throws(HearthError) -> OneTimeTokenRecord? {
        try await writing { c -> OneTimeTokenRecord? in
            let s = try c.prepare("""
                DELETE FROM auth_one_time_tokens WHERE hash = ? AND purpose = ?
                RETURNING hash, purpose, uid, email_normalized, created_at, expires_at
                """)
            defer { s.reset() }
            s.bind(1, hash.bytes)
            s.bind(2, purpose.rawValue)
            guard try s.step() else { return nil }
            let record = OneTimeTokenRecord(
                tokenHash: TokenHash(bytes: s.blob(0)), purpose: purpose, uid: s.text(2),
                emailNormalized: s.text(3), createdAt: Timestamp(microseconds: s.int(4)),
                expiresAt: Timestamp(microseconds: s.int(5)))
            while try s.step() {}  // finish the statement so the delete completes
            return record
        }
    }

    package func deleteOneTimeTokens(uid: String, purpose: OneTimeTokenRecord.Purpose) async throws(HearthError) {
        try await writing { c in
            let s = try c.prepare("DELETE FROM auth_one_time_tokens WHERE uid = ? AND purpose = ?")
            s.bind(1, uid)
            s.bind(2, purpose.rawValue)
            try s.run()
        }
    }

    package func deleteOneTimeTokens(expiredBefore cutoff: Timestamp) async throws(HearthError) -> Int {
        try await writing { c -> Int in
            let s = try c.prepare("DELETE FROM auth_one_time_tokens WHERE expires_at < ?")
            s.bind(1, cutoff.microseconds)
            try s.run()
            return c.changes
        }
    }

    // MARK: Outbox

    package func enqueueOutbox(_ messages: [OutboxMessage]) async throws(HearthError) {
        let sealed = messages.map { seal.seal($0.token) }
        try await writing { c in
            for (message, token) in zip(messages, sealed) { try Self.insertOutbox(c, message, sealed: token) }
        }
    }

    static func insertOutbox(_ c: SQLiteConnection, _ message: OutboxMessage, sealed: [UInt8]) throws {
        let s = try c.prepare("""
            INSERT INTO auth_outbox(id, purpose, recipient, uid, sealed_token, expires_at, created_at, content,
                                    attempts, next_attempt_at, last_error, dead_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        s.bind(1, message.id)
        s.bind(2, message.purpose.rawValue)
        s.bind(3, message.to)
        s.bind(4, message.uid)
        s.bind(5, sealed)
        s.bind(6, message.expiresAt.microseconds)
        s.bind(7, message.createdAt.microseconds)
        if let email = message.email { s.bind(8, encodeEmail(email)) } else { s.bindNull(8) }
        Self.bind(message.delivery, to: s, from: 9)
        try s.run()
    }

    package func pendingOutbox(dueBy time: Timestamp, limit: Int) async throws(HearthError) -> [OutboxMessage] {
        try await outbox(where: Self.dueRows, time: time, limit: limit)
    }

    package func deadOutbox(limit: Int) async throws(HearthError) -> [OutboxMessage] {
        try await outbox(where: Self.deadRows, time: Timestamp(microseconds: .min), limit: limit)
    }

    private func outbox(where condition: String, time: Timestamp, limit: Int) async throws(HearthError) -> [OutboxMessage] {
        let rows = try await queueRows("auth_outbox", columns: "id, purpose, recipient, uid, sealed_token, expires_at, created_at, content",
                                       where: condition, time: time, limit: limit) { s -> (OutboxMessage, [UInt8]) in
            guard let purpose = OutboxMessage.Purpose(rawValue: s.text(1)) else {
                throw HearthError.internal("An outbox row has an unknown purpose.")
            }
            return (OutboxMessage(id: s.text(0), purpose: purpose, to: s.text(2), uid: s.text(3), token: "",
                                  expiresAt: Timestamp(microseconds: s.int(5)), createdAt: Timestamp(microseconds: s.int(6)),
                                  email: s.isNull(7) ? nil : try Self.decodeEmail(s.text(7)), delivery: Self.delivery(s, from: 8)),
                    s.blob(4))
        }
        var messages: [OutboxMessage] = []
        var unreadable: [String] = []
        for (message, sealed) in rows {
            if message.purpose == .email {
                messages.append(message)
            } else if let token = seal.open(sealed) {
                var opened = message
                opened.token = token
                messages.append(opened)
            } else {
                unreadable.append(message.id)
            }
        }
        if !unreadable.isEmpty {
            // Sealed under another key (the key file was replaced): these links can never be sent.
            logger.warning("dropped outbox messages sealed under another key; their recipients must ask again",
                           metadata: ["count": "\(unreadable.count)"])
            for id in unreadable { try await deleteOutbox(id: id) }
        }
        return messages
    }

    package func updateOutboxDelivery(id: String, _ delivery: OutboxMessage.Delivery) async throws(HearthError) -> Bool {
        try await updateDelivery(in: "auth_outbox", id: id, delivery)
    }

    package func deleteOutbox(id: String) async throws(HearthError) {
        try await writing { c in
            let s = try c.prepare("DELETE FROM auth_outbox WHERE id = ?")
            s.bind(1, id)
            try s.run()
        }
    }

    static func encodeEmail(_ email: OutboxMessage.Email) -> String {
        var fields: [(String, JSON)] = [
            ("to", .array(email.to.map { .string($0) })), ("subject", .string(email.subject)), ("text", .string(email.text)),
        ]
        if let html = email.html { fields.append(("html", .string(html))) }
        return JSON.object(fields).text
    }

    static func decodeEmail(_ text: String) throws -> OutboxMessage.Email {
        let json = try JSON.parse(text)
        guard case .array(let to)? = json["to"], case .string(let subject)? = json["subject"],
              case .string(let body)? = json["text"] else { throw HearthError.internal("An outbox row has unreadable content.") }
        var html: String?
        if case .string(let h)? = json["html"] { html = h }
        return OutboxMessage.Email(to: to.compactMap { if case .string(let s) = $0 { s } else { nil } },
                                   subject: subject, text: body, html: html)
    }

    // MARK: Plumbing

    /// Runs a job on the store's writer; storage faults become an opaque `internal` error (logged without
    /// values: SQLite's messages name tables and columns, never bound parameters).
    func writing<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(HearthError) -> T {
        do {
            return try await file.writeJob(body)
        } catch {
            throw mapped(error)
        }
    }

    func reading<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(HearthError) -> T {
        do {
            return try await file.readJob(body)
        } catch {
            throw mapped(error)
        }
    }

    func pointReading<T>(_ body: (SQLiteConnection) throws -> T) throws(HearthError) -> T {
        do {
            return try file.pointReadJob(body)
        } catch {
            throw mapped(error)
        }
    }

    func mapped(_ error: any Error) -> HearthError {
        if let error = error as? HearthError { return error }
        logger.error("account storage failed", metadata: ["error": "\(error)"])
        return .internal()
    }

    static func exists(_ c: SQLiteConnection, _ sql: String, _ key: String) throws -> Bool {
        let s = try c.prepare(sql)
        defer { s.reset() }
        s.bind(1, key)
        return try s.step()
    }

    static func strings(_ c: SQLiteConnection, _ sql: String, _ key: String) throws -> [String] {
        let s = try c.prepare(sql)
        defer { s.reset() }
        s.bind(1, key)
        var out: [String] = []
        while try s.step() { out.append(s.text(0)) }
        return out
    }

    static func bindUser(_ s: Statement, _ user: UserRecord) {
        func bindOptional(_ index: Int32, _ text: String?) {
            if let text { s.bind(index, text) } else { s.bindNull(index) }
        }
        s.bind(1, user.uid)
        bindOptional(2, user.email)
        bindOptional(3, user.emailNormalized)
        bindOptional(4, user.passwordHash)
        bindOptional(5, user.displayName)
        s.bind(6, user.emailVerified ? 1 : 0)
        s.bind(7, user.anonymous ? 1 : 0)
        s.bind(8, String(decoding: Value.encodeFields(user.claims), as: UTF8.self))
        s.bind(9, user.createdAt.microseconds)
        s.bind(10, user.disabled ? 1 : 0)
    }

    static func oneUser(_ c: SQLiteConnection, _ sql: String, _ key: String) throws -> UserRecord? {
        let s = try c.prepare(sql)
        defer { s.reset() }
        s.bind(1, key)
        return try s.step() ? try decodeUser(s) : nil
    }

    /// A user from the row's columns `first` to `first + 9`, in `userColumns` order.
    static func decodeUser(_ s: Statement, from first: Int32 = 0) throws -> UserRecord {
        func optional(_ column: Int32) -> String? { s.isNull(first + column) ? nil : s.text(first + column) }
        return UserRecord(
            uid: s.text(first), email: optional(1), emailNormalized: optional(2), passwordHash: optional(3),
            displayName: optional(4), emailVerified: s.int(first + 5) != 0, anonymous: s.int(first + 6) != 0,
            claims: try Value.decodeFields(JSON.parse(s.blob(first + 7))),
            createdAt: Timestamp(microseconds: s.int(first + 8)), disabled: s.int(first + 9) != 0)
    }

    static func oneSession(_ c: SQLiteConnection, _ sql: String, bind: (Statement) -> Void) throws -> SessionRecord? {
        let s = try c.prepare(sql)
        defer { s.reset() }
        bind(s)
        return try s.step() ? try decodeSession(s) : nil
    }

    static func decodeSession(_ s: Statement) throws -> SessionRecord {
        guard let provider = SignInProvider(rawValue: s.text(9)) else {
            throw HearthError.internal("A session row has an unknown sign-in provider.")
        }
        return SessionRecord(
            id: s.text(0), uid: s.text(1), accessTokenHash: TokenHash(bytes: s.blob(2)),
            accessIssuedAt: Timestamp(microseconds: s.int(3)), accessExpires: Timestamp(microseconds: s.int(4)),
            refreshTokenHash: TokenHash(bytes: s.blob(5)), refreshExpires: Timestamp(microseconds: s.int(6)),
            createdAt: Timestamp(microseconds: s.int(7)),
            revokedAt: s.isNull(8) ? nil : Timestamp(microseconds: s.int(8)), provider: provider,
            claims: s.isNull(10) ? nil : try Value.decodeFields(JSON.parse(s.blob(10))))
    }
}
