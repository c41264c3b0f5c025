import HearthCore
import HearthSQLite

/// Sends under an `Idempotency-Key` (`send_keys`): the first queues and records its ids, in the same
/// transaction; a second with the same key answers those ids and queues nothing.
extension SQLiteAuthStorage {
    package func enqueueOutbox(_ messages: [OutboxMessage], key: SendKey, at time: Timestamp) async throws(HearthError) -> [String] {
        let sealed = messages.map { seal.seal($0.token) }
        return try await writing { c in
            try Self.keyed(c, kind: "email", key: key, at: time) {
                for (message, token) in zip(messages, sealed) { try Self.insertOutbox(c, message, sealed: token) }
                return messages.map(\.id)
            }
        }
    }

    package func enqueuePush(_ messages: [PushMessage], key: SendKey, at time: Timestamp) async throws(HearthError) -> [String] {
        try await writing { c in
            try Self.keyed(c, kind: "push", key: key, at: time) {
                try Self.insertPush(c, messages)
                return messages.map(\.id)
            }
        }
    }

    /// The ids recorded under `key` (refused if recorded for another request), else those `queue` answers,
    /// recorded. Keys older than `SendKey.lifetime` are dropped first, so they neither answer nor pile up.
    static func keyed(_ c: SQLiteConnection, kind: String, key: SendKey, at time: Timestamp,
                      queue: () throws -> [String]) throws -> [String] {
        let prune = try c.prepare("DELETE FROM send_keys WHERE created_at < ?")
        prune.bind(1, time.microseconds - Int64(SendKey.lifetime.components.seconds) * 1_000_000)
        try prune.run()
        let find = try c.prepare("SELECT fingerprint, ids FROM send_keys WHERE kind = ? AND key = ?")
        defer { find.reset() }
        find.bind(1, kind)
        find.bind(2, key.key)
        if try find.step() {
            guard find.blob(0) == key.fingerprint else { throw key.reused }
            let ids = find.text(1)
            return ids.isEmpty ? [] : ids.split(separator: " ").map(String.init)
        }
        let ids = try queue()
        let record = try c.prepare("INSERT INTO send_keys(kind, key, fingerprint, ids, created_at) VALUES (?, ?, ?, ?, ?)")
        record.bind(1, kind)
        record.bind(2, key.key)
        record.bind(3, key.fingerprint)
        record.bind(4, ids.joined(separator: " "))
        record.bind(5, time.microseconds)
        try record.run()
        return ids
    }
}
