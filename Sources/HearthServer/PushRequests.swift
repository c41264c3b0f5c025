import HearthAuth
import HearthCore

/// The bodies of the push endpoints, each checked whole before anything is stored.
enum PushRequests {
    /// Longest device token, in bytes.
    static let maxTokenBytes = 4096
    /// Largest notification and data together, serialized (APNs's and FCM's limit).
    static let maxPayloadBytes = 4096
    /// Data keys FCM reserves; `aps` is APNs's own.
    static let reservedDataKeys: Set = ["from", "notification", "message_type", "aps"]

    /// `POST /v1/push/devices`: `{"token", "platform": "apns"|"fcm", "topics"?: [names]}`.
    struct Registration {
        let token: String
        let platform: PushDevice.Platform
        let topics: [String]

        init(json: JSON) throws(HearthError) {
            try PushRequests.onlyFields(json, ["token", "platform", "topics"])
            guard case .string(let token)? = json["token"], !token.isEmpty else {
                throw .invalidArgument("token: the device's token from APNs or FCM is required, as a string")
            }
            guard token.utf8.count <= PushRequests.maxTokenBytes,
                  token.utf8.allSatisfy({ PushRequests.isTokenByte($0) }) else {
                // Never echo the token: it is a credential of the device.
                throw .invalidArgument("token: not a device token (letters, digits, ':', '_', '-' and '.', at most \(PushRequests.maxTokenBytes) bytes)")
            }
            guard case .string(let name)? = json["platform"], let platform = PushDevice.Platform(rawValue: name) else {
                throw .invalidArgument("platform: \"apns\" or \"fcm\" is required")
            }
            var topics: [String] = []
            switch json["topics"] {
            case nil, .null?: break
            case .array(let list)?:
                for (i, item) in list.enumerated() {
                    guard case .string(let topic) = item else { throw .invalidArgument("topics[\(i)]: a topic name string is required") }
                    try PushRequests.checkTopic(topic, field: "topics[\(i)]")
                    if !topics.contains(topic) { topics.append(topic) }
                }
            default: throw .invalidArgument("topics: an array of topic names is required when given")
            }
            self.token = token
            self.platform = platform
            self.topics = topics
        }
    }

    /// Who a send goes to.
    enum Target: Equatable {
        case uid(String)
        case device(String)
        case topic(String)
    }

    /// `POST /v1/push/send`: `{"to": {"uid"|"device"|"topic": …}, "notification"?: {"title"?, "body"?},
    /// "data"?: {key: string}}`, with a notification, data or both.
    struct Send {
        let target: Target
        /// What every device's queued notification holds: `notification` and `data` as given.
        let content: JSON

        init(json: JSON) throws(HearthError) {
            try PushRequests.onlyFields(json, ["to", "notification", "data"])
            guard case .object(let to)? = json["to"], to.count == 1, let (kind, value) = to.first else {
                throw .invalidArgument("to: an object with exactly one of uid, device or topic is required")
            }
            guard case .string(let name) = value, !name.isEmpty else { throw .invalidArgument("to.\(kind): a non-empty string is required") }
            switch kind {
            case "uid": target = .uid(name)
            case "device": target = .device(name)
            case "topic":
                try PushRequests.checkTopic(name, field: "to.topic")
                target = .topic(name)
            default: throw .invalidArgument("to: unknown recipient kind '\(kind)'; known: uid, device, topic")
            }
            var content: [(String, JSON)] = []
            switch json["notification"] {
            case nil, .null?: break
            case .object(let fields)?:
                var checked: [(String, JSON)] = []
                for (key, value) in fields {
                    guard key == "title" || key == "body" else {
                        throw .invalidArgument("notification: unknown field '\(key)'; known: title, body")
                    }
                    guard case .string = value else { throw .invalidArgument("notification.\(key): a string is required") }
                    checked.append((key, value))
                }
                guard !checked.isEmpty else { throw .invalidArgument("notification: a title, a body or both are required") }
                content.append(("notification", .object(checked)))
            default: throw .invalidArgument("notification: an object {\"title\", \"body\"} is required when given")
            }
            switch json["data"] {
            case nil, .null?: break
            case .object(let fields)?:
                for (key, value) in fields {
                    guard case .string = value else {
                        throw .invalidArgument("data.\(key): a string is required (FCM's data values are strings)")
                    }
                    if key.isEmpty || PushRequests.reservedDataKeys.contains(key) || key.hasPrefix("google.") || key.hasPrefix("gcm.") {
                        throw .invalidArgument("data: the key '\(key)' is reserved (from, notification, message_type, aps, google.*, gcm.*)")
                    }
                }
                if !fields.isEmpty { content.append(("data", .object(fields))) }
            default: throw .invalidArgument("data: an object of string values is required when given")
            }
            guard !content.isEmpty else { throw .invalidArgument("a notification, data or both are required") }
            let size = JSON.object(content).serialized().count
            guard size <= PushRequests.maxPayloadBytes else {
                throw .payloadTooLarge("the notification and data are \(size) bytes; at most \(PushRequests.maxPayloadBytes)")
            }
            self.content = .object(content)
        }
    }

    /// `POST`/`DELETE /v1/push/topics/{topic}`: `{"device": id}`.
    static func deviceField(_ json: JSON) throws(HearthError) -> String {
        try onlyFields(json, ["device"])
        guard case .string(let id)? = json["device"], !id.isEmpty else {
            throw .invalidArgument("device: the id registration answered with is required")
        }
        return id
    }

    /// A topic name as FCM takes them: `[a-zA-Z0-9-_.~%]{1,900}`.
    static func checkTopic(_ topic: String, field: String) throws(HearthError) {
        let allowed = topic.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || "-_.~%".utf8.contains(b)
        }
        guard !topic.isEmpty, topic.utf8.count <= 900, allowed else {
            throw .invalidArgument("\(field): '\(topic.prefix(100))' is not a topic name (1-900 of a-z, A-Z, 0-9, -, _, ., ~, %)")
        }
    }

    static func isTokenByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x3A || b == 0x5F
            || b == 0x2D || b == 0x2E
    }

    static func onlyFields(_ json: JSON, _ known: [String]) throws(HearthError) {
        guard case .object(let pairs) = json else { throw .invalidArgument("the body must be a JSON object") }
        if let unknown = pairs.first(where: { !known.contains($0.0) }) {
            throw .invalidArgument("unknown field '\(unknown.0)'; known: \(known.joined(separator: ", "))")
        }
    }
}
