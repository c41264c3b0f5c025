import HearthCore

/// Where accounts, sessions, one-time tokens and the outbox live. `AuthService` holds all the logic; an
/// implementation only stores and finds rows, with the atomicity each method names (a SQL implementation
/// gets it from a unique index or a single `UPDATE … WHERE`). Failures are `HearthError` (storage faults
/// as `internal`, never leaking SQL or tokens). `AuthStorageConformance.run`, in HearthTesting, checks an
/// implementation.
///
/// A SQL shape that fits (hashes as 32-byte BLOBs, times as microseconds):
/// ```sql
/// CREATE TABLE auth_users (uid TEXT PRIMARY KEY, email TEXT, email_normalized TEXT UNIQUE,
///   password_hash TEXT, display_name TEXT, email_verified INTEGER NOT NULL, anonymous INTEGER NOT NULL,
///   claims TEXT NOT NULL /* wire JSON */, created_at INTEGER NOT NULL, disabled INTEGER NOT NULL);
/// CREATE TABLE auth_sessions (id TEXT PRIMARY KEY, uid TEXT NOT NULL /* deleted with its account, if any */,
///   access_hash BLOB NOT NULL UNIQUE, access_issued INTEGER NOT NULL, access_expires INTEGER NOT NULL,
///   refresh_hash BLOB NOT NULL UNIQUE, refresh_expires INTEGER NOT NULL, created_at INTEGER NOT NULL,
///   revoked_at INTEGER, provider TEXT NOT NULL, claims TEXT /* a custom session's, wire JSON */);
/// CREATE TABLE auth_retired_refresh (hash BLOB PRIMARY KEY,
///   session_id TEXT NOT NULL REFERENCES auth_sessions ON DELETE CASCADE);
/// CREATE TABLE auth_one_time_tokens (hash BLOB PRIMARY KEY, purpose TEXT NOT NULL,
///   uid TEXT NOT NULL REFERENCES auth_users ON DELETE CASCADE, email_normalized TEXT NOT NULL,
///   created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
/// CREATE TABLE auth_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, purpose TEXT NOT NULL,
///   recipient TEXT NOT NULL, uid TEXT NOT NULL, token TEXT NOT NULL, expires_at INTEGER NOT NULL,
///   created_at INTEGER NOT NULL);
/// ```
/// `rotateSession` is then one transaction: `UPDATE auth_sessions SET … WHERE id = ? AND refresh_hash = ?
/// AND revoked_at IS NULL`, and on one changed row `INSERT INTO auth_retired_refresh`; `consumeOneTimeToken`
/// is `DELETE … WHERE hash = ? AND purpose = ? RETURNING *`.
public protocol AuthStorage: Sendable {
    // MARK: Users

    /// Inserts a new account; `already-exists` if the uid or the normalized email is taken (atomically,
    /// like a unique index).
    func insertUser(_ user: UserRecord) async throws(HearthError)
    /// The account with this uid, if any.
    func user(uid: String) async throws(HearthError) -> UserRecord?
    /// The account with this normalized email, if any.
    func user(emailNormalized: String) async throws(HearthError) -> UserRecord?
    /// Replaces an account's row; `not-found` if it is gone, `already-exists` if its new email is taken.
    func updateUser(_ user: UserRecord) async throws(HearthError)
    /// Deletes an account with its sessions, retired refresh hashes and one-time tokens (and pending
    /// outbox messages); answers the ids of the sessions that were live, or nil if there was no account.
    func deleteUser(uid: String) async throws(HearthError) -> [String]?
    /// Accounts in uid order (UTF-8 byte order) after `afterUID`, at most `limit`.
    func listUsers(after afterUID: String?, limit: Int) async throws(HearthError) -> [UserRecord]

    // MARK: Sessions

    /// Inserts a new session.
    func insertSession(_ session: SessionRecord) async throws(HearthError)
    /// The session with this id, if any.
    func session(id: String) async throws(HearthError) -> SessionRecord?
    /// The session whose current access token has this hash, if any.
    func session(accessTokenHash: TokenHash) async throws(HearthError) -> SessionRecord?
    /// The session whose current access token has this hash, with its account (nil if the account is gone):
    /// what every authenticated request needs, so it is a lookup on the caller's thread (a network thread
    /// may ask), which SQL storage answers with one indexed join.
    func sessionWithUser(accessTokenHash: TokenHash) throws(HearthError) -> (SessionRecord, UserRecord?)?
    /// The session whose current refresh token has this hash, if any.
    func session(refreshTokenHash: TokenHash) async throws(HearthError) -> SessionRecord?
    /// The session that once had this refresh token and has since rotated it away, if any.
    func session(retiredRefreshHash: TokenHash) async throws(HearthError) -> SessionRecord?
    /// Atomically: if the session exists, is not revoked and its current refresh hash is `current`,
    /// retires `current`, installs `rotation` and answers the updated session; otherwise answers nil and
    /// changes nothing (a concurrent refresh won, or the session was revoked).
    func rotateSession(id: String, from current: TokenHash, to rotation: SessionRotation)
        async throws(HearthError) -> SessionRecord?
    /// Marks a session revoked (if not already); answers whether it was live before.
    func revokeSession(id: String, at time: Timestamp) async throws(HearthError) -> Bool
    /// Revokes every unrevoked session of an account except `keep`; answers the revoked ids.
    func revokeSessions(uid: String, except keep: String?, at time: Timestamp) async throws(HearthError) -> [String]
    /// Every session of an account, revoked or not.
    func sessions(uid: String) async throws(HearthError) -> [SessionRecord]
    /// Deletes sessions (with their retired refresh hashes) whose refresh token expired or that were
    /// revoked before `cutoff`; answers how many.
    func deleteSessions(endedBefore cutoff: Timestamp) async throws(HearthError) -> Int

    // MARK: One-time tokens

    /// Stores a one-time token, first deleting the account's earlier ones of the same purpose (only the
    /// newest link works), and queues the message that carries it, atomically: a token exists only with
    /// its message, and a queued message only with its token.
    func replaceOneTimeToken(_ token: OneTimeTokenRecord, queueing message: OutboxMessage) async throws(HearthError)
    /// The token with this hash and purpose, left in place (a page that only shows a form), or nil.
    func oneTimeToken(hash: TokenHash, purpose: OneTimeTokenRecord.Purpose) async throws(HearthError) -> OneTimeTokenRecord?
    /// Atomically removes and answers the token with this hash and purpose (single use), or nil.
    func consumeOneTimeToken(hash: TokenHash, purpose: OneTimeTokenRecord.Purpose)
        async throws(HearthError) -> OneTimeTokenRecord?
    /// Deletes an account's tokens of a purpose (after a password change, say).
    func deleteOneTimeTokens(uid: String, purpose: OneTimeTokenRecord.Purpose) async throws(HearthError)
    /// Deletes tokens that expired before `cutoff`; answers how many.
    func deleteOneTimeTokens(expiredBefore cutoff: Timestamp) async throws(HearthError) -> Int

    // MARK: Outbox

    /// Queues messages, all or none.
    func enqueueOutbox(_ messages: [OutboxMessage]) async throws(HearthError)
    /// Queues messages under a sender's key at `time`, all or none, and answers the ids queued: those recorded
    /// under the key when it was used before (within `SendKey.lifetime`), queueing nothing, or else the new
    /// messages', recorded under it in the same commit. A key recorded for another request is refused
    /// (`key.reused`).
    func enqueueOutbox(_ messages: [OutboxMessage], key: SendKey, at time: Timestamp) async throws(HearthError) -> [String]
    /// The oldest pending (not dead) messages due by `time`, at most `limit`, their tokens opened.
    func pendingOutbox(dueBy time: Timestamp, limit: Int) async throws(HearthError) -> [OutboxMessage]
    /// The oldest dead messages, at most `limit`.
    func deadOutbox(limit: Int) async throws(HearthError) -> [OutboxMessage]
    /// Records a message's delivery state; false if the message is gone.
    func updateOutboxDelivery(id: String, _ delivery: OutboxMessage.Delivery) async throws(HearthError) -> Bool
    /// Removes a delivered message.
    func deleteOutbox(id: String) async throws(HearthError)
}
