import HearthAuth
import HearthCore

/// Checks that an `AuthStorage` keeps the protocol's promises (uniqueness, atomic rotation, single-use
/// tokens, cascades, ordering), so every implementation — memory, SQLite, later PostgreSQL — is held to
/// the same contract by one piece of code. Each test suite calls `run` with a factory of empty stores and
/// expects no failures.
public enum AuthStorageConformance {
    /// Runs every check, each on a fresh empty store from `makeStorage`; answers one line per failed
    /// expectation (empty when the store conforms).
    public static func run(_ makeStorage: @Sendable () async throws(HearthError) -> any AuthStorage)
        async throws(HearthError) -> [String] {
        var failures: [String] = []
        for (name, check) in checks {
            var recorder = Recorder(name: name)
            try await check(try await makeStorage(), &recorder)
            failures += recorder.failures
        }
        return failures
    }

    struct Recorder {
        let name: String
        var failures: [String] = []

        mutating func expect(_ condition: Bool, _ what: String) {
            if !condition { failures.append("\(name): \(what)") }
        }
    }

    typealias Check = @Sendable (any AuthStorage, inout Recorder) async throws(HearthError) -> Void

    static let t0 = Timestamp(microseconds: 1_800_000_000_000_000)

    static func at(_ seconds: Int64) -> Timestamp { Timestamp(microseconds: t0.microseconds + seconds * 1_000_000) }

    static func user(_ uid: String, _ email: String? = nil) -> UserRecord {
        UserRecord(uid: uid, email: email, emailNormalized: email.map(EmailAddress.normalize),
                   passwordHash: nil, createdAt: t0)
    }

    static func session(_ id: String, uid: String, refreshExpires: Int64 = 1_000) -> SessionRecord {
        SessionRecord(id: id, uid: uid, accessTokenHash: Tokens.hash("a-" + id), accessIssuedAt: t0,
                      accessExpires: at(100), refreshTokenHash: Tokens.hash("r-" + id),
                      refreshExpires: at(refreshExpires), createdAt: t0, provider: .password)
    }

    static let checks: [(String, Check)] = [
        ("users are unique by uid and normalized email", { storage, r throws(HearthError) in
            try await storage.insertUser(user("u1", "Ann@Example.com"))
            r.expect(try await storage.user(uid: "u1")?.email == "Ann@Example.com", "reads back by uid")
            r.expect(try await storage.user(emailNormalized: "ann@example.com")?.uid == "u1", "reads back by email")
            r.expect(try await storage.user(emailNormalized: "Ann@Example.com") == nil, "looks up the normalized form only")
            r.expect(await code { () throws(HearthError) in try await storage.insertUser(user("u1")) } == .alreadyExists,
                     "a taken uid is already-exists")
            r.expect(await code { () throws(HearthError) in try await storage.insertUser(user("u2", "ann@example.com")) } == .alreadyExists,
                     "a taken email is already-exists")
            try await storage.insertUser(user("u3"))
            try await storage.insertUser(user("u4"))  // several accounts without email are fine
            try await storage.insertUser(user("u2", "bob@example.com"))
            var moved = user("u2", "ann@example.com")
            r.expect(await code { () throws(HearthError) in try await storage.updateUser(moved) } == .alreadyExists,
                     "moving to a taken email is already-exists")
            moved = user("u2", "bea@example.com")
            try await storage.updateUser(moved)
            r.expect(try await storage.user(emailNormalized: "bob@example.com") == nil, "an old email is freed")
            r.expect(try await storage.user(emailNormalized: "bea@example.com")?.uid == "u2", "a new email is indexed")
            r.expect(await code { () throws(HearthError) in try await storage.updateUser(user("nobody")) } == .notFound,
                     "updating a missing account is not-found")
        }),
        ("users list in uid byte order with paging", { storage, r throws(HearthError) in
            for uid in ["b", "a", "é", "B", "c"] { try await storage.insertUser(user(uid)) }
            let all = try await storage.listUsers(after: nil, limit: 10).map(\.uid)
            r.expect(all == ["B", "a", "b", "c", "é"], "ordered by UTF-8 bytes, got \(all)")
            let page = try await storage.listUsers(after: "a", limit: 2).map(\.uid)
            r.expect(page == ["b", "c"], "resumes after a uid, got \(page)")
        }),
        ("rotation is compare-and-swap and retires the old refresh hash", { storage, r throws(HearthError) in
            try await storage.insertUser(user("u"))
            let s = session("s1", uid: "u")
            try await storage.insertSession(s)
            r.expect(try await storage.session(accessTokenHash: s.accessTokenHash)?.id == "s1", "found by access hash")
            r.expect(try await storage.session(refreshTokenHash: s.refreshTokenHash)?.id == "s1", "found by refresh hash")
            let joined = try await storage.sessionWithUser(accessTokenHash: s.accessTokenHash)
            r.expect(joined?.0 == s && joined?.1 == user("u"), "found with its account by access hash")
            r.expect(try await storage.sessionWithUser(accessTokenHash: Tokens.hash("nothing")) == nil,
                     "an unknown access hash finds nothing")
            let rotation = SessionRotation(accessTokenHash: Tokens.hash("a2"), accessIssuedAt: at(50),
                                           accessExpires: at(150), refreshTokenHash: Tokens.hash("r2"),
                                           refreshExpires: at(2_000))
            let rotated = try await storage.rotateSession(id: "s1", from: s.refreshTokenHash, to: rotation)
            r.expect(rotated?.refreshTokenHash == Tokens.hash("r2") && rotated?.accessExpires == at(150),
                     "answers the rotated session")
            r.expect(try await storage.session(accessTokenHash: s.accessTokenHash) == nil, "the old access hash is gone")
            r.expect(try await storage.session(refreshTokenHash: s.refreshTokenHash) == nil, "the old refresh hash is gone")
            r.expect(try await storage.session(retiredRefreshHash: s.refreshTokenHash)?.id == "s1", "the old refresh hash is retired")
            r.expect(try await storage.session(accessTokenHash: Tokens.hash("a2"))?.id == "s1", "the new access hash works")
            let again = try await storage.rotateSession(id: "s1", from: s.refreshTokenHash, to: rotation)
            r.expect(again == nil, "a second rotation from the same hash fails")
            r.expect(try await storage.revokeSession(id: "s1", at: at(60)), "revoking a live session answers true")
            r.expect(try await !storage.revokeSession(id: "s1", at: at(61)), "revoking twice answers false")
            r.expect(try await storage.session(id: "s1")?.revokedAt == at(60), "keeps the first revocation time")
            let afterRevoke = try await storage.rotateSession(id: "s1", from: Tokens.hash("r2"), to: rotation)
            r.expect(afterRevoke == nil, "a revoked session does not rotate")
        }),
        ("revoking and deleting sessions", { storage, r throws(HearthError) in
            try await storage.insertUser(user("u"))
            try await storage.insertUser(user("v"))
            for id in ["s1", "s2", "s3"] { try await storage.insertSession(session(id, uid: "u")) }
            try await storage.insertSession(session("t1", uid: "v", refreshExpires: 10))
            let revoked = try await storage.revokeSessions(uid: "u", except: "s2", at: at(5))
            r.expect(revoked.sorted() == ["s1", "s3"], "revokes all but the kept one, got \(revoked)")
            r.expect(try await storage.session(id: "s2")?.revokedAt == nil, "the kept session stays live")
            r.expect(try await storage.sessions(uid: "u").count == 3, "lists an account's sessions")
            let deleted = try await storage.deleteSessions(endedBefore: at(20))
            r.expect(deleted == 3, "deletes revoked and refresh-expired sessions, got \(deleted)")
            r.expect(try await storage.session(id: "s2") != nil, "keeps live sessions")
            try await storage.insertSession(session("orphan", uid: "gone"))
            let orphan = try await storage.sessionWithUser(accessTokenHash: Tokens.hash("a-orphan"))
            r.expect(orphan?.0.id == "orphan" && orphan?.1 == nil, "a session whose account is gone has no account")
            let live = try await storage.deleteUser(uid: "u")
            r.expect(live == ["s2"], "deleting an account answers its live sessions, got \(String(describing: live))")
            r.expect(try await storage.session(id: "s2") == nil, "deleting an account deletes its sessions")
            r.expect(try await storage.deleteUser(uid: "u") == nil, "deleting a missing account answers nil")
        }),
        ("one-time tokens are single-use and only the newest works", { storage, r throws(HearthError) in
            try await storage.insertUser(user("u", "u@example.com"))
            func token(_ text: String, _ purpose: OneTimeTokenRecord.Purpose, expires: Int64 = 100) -> OneTimeTokenRecord {
                OneTimeTokenRecord(tokenHash: Tokens.hash(text), purpose: purpose, uid: "u",
                                   emailNormalized: "u@example.com", createdAt: t0, expiresAt: at(expires))
            }
            func message(_ text: String) -> OutboxMessage {
                OutboxMessage(id: "m-" + text, purpose: .passwordReset, to: "u@example.com", uid: "u", token: text,
                              expiresAt: at(100), createdAt: t0)
            }
            try await storage.replaceOneTimeToken(token("old", .passwordReset), queueing: message("old"))
            try await storage.replaceOneTimeToken(token("new", .passwordReset), queueing: message("new"))
            try await storage.replaceOneTimeToken(token("verify", .emailVerification, expires: 10), queueing: message("verify"))
            r.expect(try await storage.consumeOneTimeToken(hash: Tokens.hash("old"), purpose: .passwordReset) == nil,
                     "a replaced token is gone")
            r.expect(try await storage.consumeOneTimeToken(hash: Tokens.hash("verify"), purpose: .passwordReset) == nil,
                     "a token only works for its purpose")
            let read = try await storage.oneTimeToken(hash: Tokens.hash("new"), purpose: .passwordReset)
            r.expect(read?.uid == "u" && read?.expiresAt == at(100) && read?.emailNormalized == "u@example.com",
                     "a token can be read without spending it")
            r.expect(try await storage.oneTimeToken(hash: Tokens.hash("verify"), purpose: .passwordReset) == nil,
                     "a token is read only for its purpose")
            r.expect(try await storage.consumeOneTimeToken(hash: Tokens.hash("new"), purpose: .passwordReset)?.uid == "u",
                     "the newest token works")
            r.expect(try await storage.consumeOneTimeToken(hash: Tokens.hash("new"), purpose: .passwordReset) == nil,
                     "a token works once")
            r.expect(try await storage.deleteOneTimeTokens(expiredBefore: at(50)) == 1, "expired tokens are swept")
            r.expect(try await storage.pendingOutbox(dueBy: at(0), limit: 10).map(\.token) == ["old", "new", "verify"],
                     "each token's message is queued with it")
            try await storage.replaceOneTimeToken(token("again", .passwordReset), queueing: message("again"))
            try await storage.deleteOneTimeTokens(uid: "u", purpose: .passwordReset)
            r.expect(try await storage.consumeOneTimeToken(hash: Tokens.hash("again"), purpose: .passwordReset) == nil,
                     "an account's tokens can be deleted")
        }),
        ("the outbox is first in, first out", { storage, r throws(HearthError) in
            try await storage.insertUser(user("u", "u@example.com"))
            try await storage.enqueueOutbox(["m1", "m2", "m3"].map {
                OutboxMessage(id: $0, purpose: .passwordReset, to: "u@example.com", uid: "u", token: "t",
                              expiresAt: at(10), createdAt: t0)
            })
            let email = OutboxMessage.Email(to: ["a@example.com", "b@example.com"], subject: "Hi", text: "Hello", html: "<p>Hello</p>")
            try await storage.enqueueOutbox([OutboxMessage(id: "e1", purpose: .email, to: "a@example.com", uid: "", token: "",
                                                           expiresAt: t0, createdAt: t0, email: email)])
            r.expect(try await storage.pendingOutbox(dueBy: t0, limit: 2).map(\.id) == ["m1", "m2"], "oldest first, limited")
            r.expect(try await storage.pendingOutbox(dueBy: t0, limit: 10).last?.email == email, "an app email keeps its content")
            try await storage.deleteOutbox(id: "m1")
            r.expect(try await storage.pendingOutbox(dueBy: t0, limit: 10).map(\.id) == ["m2", "m3", "e1"], "delivered messages go")
            let later = OutboxMessage.Delivery(attempts: 1, nextAttemptAt: at(5), lastError: "451 try later", deadAt: nil)
            r.expect(try await storage.updateOutboxDelivery(id: "m2", later), "a delivery state is recorded")
            r.expect(try await storage.pendingOutbox(dueBy: at(4), limit: 10).map(\.id) == ["m3", "e1"], "a message waits for its next attempt")
            r.expect(try await storage.pendingOutbox(dueBy: at(5), limit: 10).first?.delivery == later, "then it is due, with its state")
            let dead = OutboxMessage.Delivery(attempts: 2, nextAttemptAt: at(5), lastError: "550 no such user", deadAt: at(6))
            r.expect(try await storage.updateOutboxDelivery(id: "m3", dead), "a message is given up on")
            r.expect(try await storage.pendingOutbox(dueBy: at(99), limit: 10).map(\.id) == ["m2", "e1"], "a dead message is not pending")
            r.expect(try await storage.deadOutbox(limit: 10).map(\.delivery) == [dead], "dead messages are listed with their reason")
            r.expect(try await !storage.updateOutboxDelivery(id: "gone", later), "a missing message has no state")
            _ = try await storage.deleteUser(uid: "u")
            r.expect(try await storage.pendingOutbox(dueBy: at(99), limit: 10).map(\.id) == ["e1"], "deleting an account drops its messages")
        }),
        ("a send under a key queues once a day", { storage, r throws(HearthError) in
            let email = OutboxMessage.Email(to: ["a@example.com"], subject: "Hi", text: "Hello", html: nil)
            func message(_ id: String) -> OutboxMessage {
                OutboxMessage(id: id, purpose: .email, to: "a@example.com", uid: "", token: "", expiresAt: t0, createdAt: t0, email: email)
            }
            let key = try SendKey(header: "invite-42", request: .object([("to", .string("a@example.com"))]))!
            let other = try SendKey(header: "invite-42", request: .object([("to", .string("b@example.com"))]))!
            r.expect(try await storage.enqueueOutbox([message("k1")], key: key, at: t0) == ["k1"], "the first send queues")
            r.expect(try await storage.enqueueOutbox([message("k2")], key: key, at: at(3600)) == ["k1"],
                     "the same key and request again answers the first ids")
            r.expect(await code { () async throws(HearthError) in
                _ = try await storage.enqueueOutbox([message("k3")], key: other, at: at(3600))
            } == .unprocessableContent,
                     "the same key with another request is refused")
            r.expect(try await storage.pendingOutbox(dueBy: at(99_999), limit: 10).map(\.id) == ["k1"], "only the first was queued")
            let dayLater = at(Int64(SendKey.lifetime.components.seconds) + 1)
            r.expect(try await storage.enqueueOutbox([message("k4")], key: other, at: dayLater) == ["k4"],
                     "a key is forgotten after a day")
        }),
    ]

    static func code(_ body: () async throws(HearthError) -> Void) async -> HearthError.Code? {
        do {
            try await body()
            return nil
        } catch {
            return error.code
        }
    }
}
