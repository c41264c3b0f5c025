import Foundation
import HearthAuth
import HearthCore

/// An in-memory `AuthStorage` for tests. Every method runs under one lock, which
/// gives the atomicity the protocol asks for.
public final class MemoryAuthStorage: AuthStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var users: [String: UserRecord] = [:]
    private var uidByEmail: [String: String] = [:]
    private var sessions: [String: SessionRecord] = [:]
    private var sessionByAccess: [TokenHash: String] = [:]
    private var sessionByRefresh: [TokenHash: String] = [:]
    private var sessionByRetired: [TokenHash: String] = [:]
    private var oneTimeTokens: [TokenHash: OneTimeTokenRecord] = [:]
    private var outbox: [OutboxMessage] = []
    private var sendKeys: [String: (key: SendKey, ids: [String], at: Timestamp)] = [:]

    /// Makes an empty store.
    public init() {}

    // MARK: Users

    public func insertUser(_ user: UserRecord) throws(HearthError) {
        lock.lock()
        defer { lock.unlock() }
        guard users[user.uid] == nil else { throw .alreadyExists("An account with uid \(user.uid) already exists.") }
        if let email = user.emailNormalized, uidByEmail[email] != nil {
            throw .alreadyExists("The email address is already in use by another account.")
        }
        users[user.uid] = user
        if let email = user.emailNormalized { uidByEmail[email] = user.uid }
    }

    public func user(uid: String) -> UserRecord? {
        lock.withLock { users[uid] }
    }

    public func user(emailNormalized: String) -> UserRecord? {
        lock.withLock { uidByEmail[emailNormalized].flatMap { users[$0] } }
    }

    public func updateUser(_ user: UserRecord) throws(HearthError) {
        lock.lock()
        defer { lock.unlock() }
        guard let old = users[user.uid] else { throw .notFound("No account with uid \(user.uid).") }
        if let email = user.emailNormalized, let owner = uidByEmail[email], owner != user.uid {
            throw .alreadyExists("The email address is already in use by another account.")
        }
        if let oldEmail = old.emailNormalized { uidByEmail[oldEmail] = nil }
        if let email = user.emailNormalized { uidByEmail[email] = user.uid }
        users[user.uid] = user
    }

    public func deleteUser(uid: String) -> [String]? {
        lock.lock()
        defer { lock.unlock() }
        guard let user = users.removeValue(forKey: uid) else { return nil }
        if let email = user.emailNormalized { uidByEmail[email] = nil }
        var live: [String] = []
        for session in sessions.values where session.uid == uid {
            if session.revokedAt == nil { live.append(session.id) }
            removeSession(session.id)
        }
        oneTimeTokens = oneTimeTokens.filter { $0.value.uid != uid }
        outbox.removeAll { $0.uid == uid }
        return live.sorted()
    }

    public func listUsers(after afterUID: String?, limit: Int) -> [UserRecord] {
        lock.lock()
        defer { lock.unlock() }
        let sorted = users.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let start = afterUID.map { after in
            sorted.firstIndex { after.utf8.lexicographicallyPrecedes($0.utf8) } ?? sorted.endIndex
        } ?? sorted.startIndex
        return sorted[start...].prefix(max(0, limit)).compactMap { users[$0] }
    }

    // MARK: Sessions

    public func insertSession(_ session: SessionRecord) throws(HearthError) {
        lock.lock()
        defer { lock.unlock() }
        guard sessions[session.id] == nil else { throw .alreadyExists("Session \(session.id) already exists.") }
        sessions[session.id] = session
        sessionByAccess[session.accessTokenHash] = session.id
        sessionByRefresh[session.refreshTokenHash] = session.id
    }

    public func session(id: String) -> SessionRecord? {
        lock.withLock { sessions[id] }
    }

    public func session(accessTokenHash: TokenHash) -> SessionRecord? {
        lock.withLock { sessionByAccess[accessTokenHash].flatMap { sessions[$0] } }
    }

    public func sessionWithUser(accessTokenHash: TokenHash) -> (SessionRecord, UserRecord?)? {
        lock.lock()
        defer { lock.unlock() }
        guard let session = sessionByAccess[accessTokenHash].flatMap({ sessions[$0] }) else { return nil }
        return (session, users[session.uid])
    }

    public func session(refreshTokenHash: TokenHash) -> SessionRecord? {
        lock.withLock { sessionByRefresh[refreshTokenHash].flatMap { sessions[$0] } }
    }

    public func session(retiredRefreshHash: TokenHash) -> SessionRecord? {
        lock.withLock { sessionByRetired[retiredRefreshHash].flatMap { sessions[$0] } }
    }

    public func rotateSession(id: String, from current: TokenHash, to rotation: SessionRotation) -> SessionRecord? {
        lock.lock()
        defer { lock.unlock() }
        guard var session = sessions[id], session.revokedAt == nil, session.refreshTokenHash == current else {
            return nil
        }
        sessionByAccess[session.accessTokenHash] = nil
        sessionByRefresh[current] = nil
        sessionByRetired[current] = id
        session.accessTokenHash = rotation.accessTokenHash
        session.accessIssuedAt = rotation.accessIssuedAt
        session.accessExpires = rotation.accessExpires
        session.refreshTokenHash = rotation.refreshTokenHash
        session.refreshExpires = rotation.refreshExpires
        sessions[id] = session
        sessionByAccess[rotation.accessTokenHash] = id
        sessionByRefresh[rotation.refreshTokenHash] = id
        return session
    }

    public func revokeSession(id: String, at time: Timestamp) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard var session = sessions[id], session.revokedAt == nil else { return false }
        session.revokedAt = time
        sessions[id] = session
        return true
    }

    public func revokeSessions(uid: String, except keep: String?, at time: Timestamp) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        var revoked: [String] = []
        for (id, var session) in sessions where session.uid == uid && session.revokedAt == nil && id != keep {
            session.revokedAt = time
            sessions[id] = session
            revoked.append(id)
        }
        return revoked.sorted()
    }

    public func sessions(uid: String) -> [SessionRecord] {
        lock.withLock { sessions.values.filter { $0.uid == uid }.sorted { $0.id < $1.id } }
    }

    public func deleteSessions(endedBefore cutoff: Timestamp) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let ended = sessions.values.filter { s in
            s.refreshExpires < cutoff || (s.revokedAt.map { $0 < cutoff } ?? false)
        }
        for session in ended { removeSession(session.id) }
        return ended.count
    }

    private func removeSession(_ id: String) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        sessionByAccess[session.accessTokenHash] = nil
        sessionByRefresh[session.refreshTokenHash] = nil
        sessionByRetired = sessionByRetired.filter { $0.value != id }
    }

    // MARK: One-time tokens

    public func replaceOneTimeToken(_ token: OneTimeTokenRecord, queueing message: OutboxMessage) {
        lock.lock()
        defer { lock.unlock() }
        oneTimeTokens = oneTimeTokens.filter { !($0.value.uid == token.uid && $0.value.purpose == token.purpose) }
        oneTimeTokens[token.tokenHash] = token
        outbox.append(message)
    }

    public func oneTimeToken(hash: TokenHash, purpose: OneTimeTokenRecord.Purpose) -> OneTimeTokenRecord? {
        lock.lock()
        defer { lock.unlock() }
        guard let token = oneTimeTokens[hash], token.purpose == purpose else { return nil }
        return token
    }

    public func consumeOneTimeToken(hash: TokenHash, purpose: OneTimeTokenRecord.Purpose) -> OneTimeTokenRecord? {
        lock.lock()
        defer { lock.unlock() }
        guard let token = oneTimeTokens[hash], token.purpose == purpose else { return nil }
        oneTimeTokens[hash] = nil
        return token
    }

    public func deleteOneTimeTokens(uid: String, purpose: OneTimeTokenRecord.Purpose) {
        lock.lock()
        defer { lock.unlock() }
        oneTimeTokens = oneTimeTokens.filter { !($0.value.uid == uid && $0.value.purpose == purpose) }
    }

    public func deleteOneTimeTokens(expiredBefore cutoff: Timestamp) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let before = oneTimeTokens.count
        oneTimeTokens = oneTimeTokens.filter { $0.value.expiresAt >= cutoff }
        return before - oneTimeTokens.count
    }

    // MARK: Outbox

    public func enqueueOutbox(_ messages: [OutboxMessage]) {
        lock.withLock { outbox += messages }
    }

    public func enqueueOutbox(_ messages: [OutboxMessage], key: SendKey, at time: Timestamp) throws(HearthError) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        let oldest = time.microseconds - Int64(SendKey.lifetime.components.seconds) * 1_000_000
        sendKeys = sendKeys.filter { $0.value.at.microseconds >= oldest }
        if let recorded = sendKeys[key.key] {
            guard recorded.key == key else { throw key.reused }
            return recorded.ids
        }
        outbox += messages
        sendKeys[key.key] = (key, messages.map(\.id), time)
        return messages.map(\.id)
    }

    public func pendingOutbox(dueBy time: Timestamp, limit: Int) -> [OutboxMessage] {
        lock.withLock {
            Array(outbox.filter { $0.delivery.deadAt == nil && $0.delivery.nextAttemptAt <= time }.prefix(max(0, limit)))
        }
    }

    public func deadOutbox(limit: Int) -> [OutboxMessage] {
        lock.withLock { Array(outbox.filter { $0.delivery.deadAt != nil }.prefix(max(0, limit))) }
    }

    public func updateOutboxDelivery(id: String, _ delivery: OutboxMessage.Delivery) -> Bool {
        lock.withLock {
            guard let i = outbox.firstIndex(where: { $0.id == id }) else { return false }
            outbox[i].delivery = delivery
            return true
        }
    }

    /// Pending messages whatever their schedule, for tests.
    public func pendingOutbox(limit: Int) -> [OutboxMessage] {
        pendingOutbox(dueBy: Timestamp(microseconds: .max), limit: limit)
    }

    public func deleteOutbox(id: String) {
        lock.withLock { outbox.removeAll { $0.id == id } }
    }
}
