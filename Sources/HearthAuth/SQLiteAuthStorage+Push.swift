import HearthCore
import HearthSQLite

/// `PushStorage` on the same file as the accounts: device tokens sealed with the outbox's key and found by
/// their SHA-256, never stored in clear.
extension SQLiteAuthStorage: PushStorage {
    package func registerDevice(_ device: PushDevice) async throws(HearthError) -> PushDevice {
        let hash = Tokens.hash(device.token).bytes
        let sealed = seal.seal(device.token)
        let stored = try await writing { c -> (String, String, Int64) in
            let find = try c.prepare("SELECT id, uid, created_at FROM push_devices WHERE token_hash = ?")
            defer { find.reset() }
            find.bind(1, hash)
            guard try find.step() else {
                let s = try c.prepare("""
                    INSERT INTO push_devices(id, uid, platform, token_hash, sealed_token, created_at) VALUES (?, ?, ?, ?, ?, ?)
                    """)
                s.bind(1, device.id)
                s.bind(2, device.uid)
                s.bind(3, device.platform.rawValue)
                s.bind(4, hash)
                s.bind(5, sealed)
                s.bind(6, device.createdAt.microseconds)
                try s.run()
                return (device.id, device.uid, device.createdAt.microseconds)
            }
            let (id, owner, created) = (find.text(0), find.text(1), find.int(2))
            let s = try c.prepare("UPDATE push_devices SET uid = ?, platform = ?, sealed_token = ? WHERE id = ?")
            s.bind(1, device.uid)
            s.bind(2, device.platform.rawValue)
            s.bind(3, sealed)
            s.bind(4, id)
            try s.run()
            if owner != device.uid {
                // Another account's subscriptions and queued notifications do not follow the phone.
                for sql in ["DELETE FROM push_topics WHERE device_id = ?", "DELETE FROM push_queue WHERE device_id = ?"] {
                    let d = try c.prepare(sql)
                    d.bind(1, id)
                    try d.run()
                }
            }
            return (id, owner, created)
        }
        for topic in device.topics { _ = try await setTopic(topic, deviceID: stored.0, subscribed: true) }
        guard let result = try await self.device(id: stored.0) else { throw .internal("A registered device is gone.") }
        return result
    }

    package func device(id: String) async throws(HearthError) -> PushDevice? {
        try await devices(where: "id = ?", id).first
    }

    package func devices(uid: String) async throws(HearthError) -> [PushDevice] {
        try await devices(where: "uid = ?", uid)
    }

    package func devices(topic: String) async throws(HearthError) -> [PushDevice] {
        try await devices(where: "id IN (SELECT device_id FROM push_topics WHERE topic = ?)", topic)
    }

    private func devices(where condition: String, _ key: String) async throws(HearthError) -> [PushDevice] {
        let rows = try await reading { c -> [(PushDevice, [UInt8])] in
            let s = try c.prepare("""
                SELECT id, uid, platform, sealed_token, created_at,
                       (SELECT group_concat(topic, char(10)) FROM (SELECT topic FROM push_topics WHERE device_id = d.id ORDER BY topic))
                FROM push_devices d WHERE \(condition) ORDER BY created_at, id
                """)
            defer { s.reset() }
            s.bind(1, key)
            var out: [(PushDevice, [UInt8])] = []
            while try s.step() {
                guard let platform = PushDevice.Platform(rawValue: s.text(2)) else {
                    throw HearthError.internal("A push device row has an unknown platform.")
                }
                let topics = s.isNull(5) ? [] : s.text(5).split(separator: "\n").map(String.init)
                out.append((PushDevice(id: s.text(0), uid: s.text(1), platform: platform, token: "", topics: topics,
                                       createdAt: Timestamp(microseconds: s.int(4))), s.blob(3)))
            }
            return out
        }
        var devices: [PushDevice] = []
        for (device, sealed) in rows {
            // A token sealed under another key (the key file replaced) cannot be sent to: the app registers again.
            guard let token = seal.open(sealed) else { continue }
            var opened = device
            opened.token = token
            devices.append(opened)
        }
        return devices
    }

    package func deleteDevice(id: String) async throws(HearthError) -> Bool {
        try await writing { c -> Bool in
            guard try Self.exists(c, "SELECT 1 FROM push_devices WHERE id = ?", id) else { return false }
            for sql in ["DELETE FROM push_topics WHERE device_id = ?", "DELETE FROM push_queue WHERE device_id = ?",
                        "DELETE FROM push_devices WHERE id = ?"] {
                let s = try c.prepare(sql)
                s.bind(1, id)
                try s.run()
            }
            return true
        }
    }

    package func deleteDevices(uid: String) async throws(HearthError) {
        try await writing { c in try Self.deleteDevices(c, uid: uid) }
    }

    static func deleteDevices(_ c: SQLiteConnection, uid: String) throws {
        for sql in [
            "DELETE FROM push_topics WHERE device_id IN (SELECT id FROM push_devices WHERE uid = ?)",
            "DELETE FROM push_queue WHERE device_id IN (SELECT id FROM push_devices WHERE uid = ?)",
            "DELETE FROM push_devices WHERE uid = ?",
        ] {
            let s = try c.prepare(sql)
            s.bind(1, uid)
            try s.run()
        }
    }

    package func setTopic(_ topic: String, deviceID: String, subscribed: Bool) async throws(HearthError) -> Bool {
        try await writing { c -> Bool in
            guard try Self.exists(c, "SELECT 1 FROM push_devices WHERE id = ?", deviceID) else { return false }
            let s = try c.prepare(subscribed
                ? "INSERT OR IGNORE INTO push_topics(topic, device_id) VALUES (?, ?)"
                : "DELETE FROM push_topics WHERE topic = ? AND device_id = ?")
            s.bind(1, topic)
            s.bind(2, deviceID)
            try s.run()
            return true
        }
    }

    package func enqueuePush(_ messages: [PushMessage]) async throws(HearthError) {
        try await writing { c in try Self.insertPush(c, messages) }
    }

    static func insertPush(_ c: SQLiteConnection, _ messages: [PushMessage]) throws {
        for message in messages {
            let s = try c.prepare("""
                INSERT INTO push_queue(id, device_id, content, created_at, attempts, next_attempt_at, last_error, dead_at)
                VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)
                """)
            s.bind(1, message.id)
            s.bind(2, message.deviceID)
            s.bind(3, String(decoding: message.content.serialized(), as: UTF8.self))
            s.bind(4, message.createdAt.microseconds)
            s.bind(5, Int64(message.delivery.attempts))
            s.bind(6, message.delivery.nextAttemptAt.microseconds)
            try s.run()
        }
    }

    package func pendingPush(dueBy time: Timestamp, limit: Int) async throws(HearthError) -> [PushMessage] {
        try await pushQueue(where: Self.dueRows, time: time, limit: limit)
    }

    package func deadPush(limit: Int) async throws(HearthError) -> [PushMessage] {
        try await pushQueue(where: Self.deadRows, time: Timestamp(microseconds: .min), limit: limit)
    }

    private func pushQueue(where condition: String, time: Timestamp, limit: Int) async throws(HearthError) -> [PushMessage] {
        try await queueRows("push_queue", columns: "id, device_id, content, created_at", where: condition, time: time,
                            limit: limit) { s in
            PushMessage(id: s.text(0), deviceID: s.text(1), content: try JSON.parse(s.text(2)),
                        createdAt: Timestamp(microseconds: s.int(3)), delivery: Self.delivery(s, from: 4))
        }
    }

    package func updatePushDelivery(id: String, _ delivery: OutboxMessage.Delivery) async throws(HearthError) -> Bool {
        try await updateDelivery(in: "push_queue", id: id, delivery)
    }

    package func deletePush(id: String) async throws(HearthError) {
        try await writing { c in
            let s = try c.prepare("DELETE FROM push_queue WHERE id = ?")
            s.bind(1, id)
            try s.run()
        }
    }
}
