import Foundation
import HearthAuth
import HearthCore

/// The functions file (`hearth serve --functions FILE`): the endpoints Hearth calls, and the triggers,
/// schedules and timers whose events it sends them (docs/functions.md). Parsed strictly: every mistake is an
/// error naming its place (`triggers[1].endpoint: unknown endpoint 'x'`).
public struct FunctionsFile: Sendable {
    /// Where events go.
    public struct Endpoint: Sendable {
        /// Its name in the file.
        public let name: String
        /// An `http` or `https` URL.
        public let url: URL
        /// The signing key: the bytes of the secret's base64 after `whsec_`.
        public let key: [UInt8]
        /// The identity each event carries a short-lived token for, when declared.
        public let identity: Identity?
        /// Signs with `key`, keyed once for all the endpoint's events.
        public let signer: WebhookSignature.Signer

        init(name: String, url: URL, key: [UInt8], identity: Identity?) {
            self.name = name
            self.url = url
            self.key = key
            self.identity = identity
            signer = WebhookSignature.Signer(key: key)
        }
    }

    /// An endpoint's own identity (`{"uid", "claims"?}`): what rules see as `request.auth` for the token each
    /// of its events carries. The uid needs no account, like a service account's.
    public struct Identity: Sendable, Equatable {
        /// `request.auth.uid`.
        public let uid: String
        /// Custom claims, in `request.auth.token`.
        public let claims: [String: Value]
    }

    /// What a trigger fires on.
    public enum Event: String, Sendable, CaseIterable {
        /// The values of `on`, as written in the file.
        case documentCreated = "document.created", documentUpdated = "document.updated"
        case documentDeleted = "document.deleted", documentWritten = "document.written"
        case userCreated = "user.created", userDeleted = "user.deleted"
        case fileFinalized = "file.finalized", fileDeleted = "file.deleted"

        var isDocument: Bool { rawValue.hasPrefix("document.") }
        var isUser: Bool { rawValue.hasPrefix("user.") }
    }

    /// A trigger: an event on a path, sent to an endpoint.
    public struct Trigger: Sendable {
        /// Its name, sent as the event's `name`.
        public let name: String
        /// What it fires on.
        public let on: Event
        /// The documents or files it watches (nil for user triggers).
        public let path: PathPattern?
        /// The endpoint its events go to.
        public let endpoint: String
    }

    /// A schedule: a cron expression in a time zone.
    public struct Schedule: Sendable {
        /// Its name.
        public let name: String
        /// When it fires, in `timeZone`.
        public let cron: CronExpression
        /// The time zone the expression reads in.
        public let timeZone: TimeZone
        /// The endpoint its events go to.
        public let endpoint: String
    }

    /// A timer: fires when the timestamp in `field` of a matching document passes.
    public struct Timer: Sendable {
        /// Its name.
        public let name: String
        /// The documents it watches.
        public let path: PathPattern
        /// The timestamp field whose time fires it.
        public let field: FieldPath
        /// The endpoint its events go to.
        public let endpoint: String
    }

    /// The endpoints, by name.
    public let endpoints: [String: Endpoint]
    /// The triggers, in the file's order.
    public let triggers: [Trigger]
    /// The schedules, in the file's order.
    public let schedules: [Schedule]
    /// The timers, in the file's order.
    public let timers: [Timer]

    /// The shortest and longest signing keys, in bytes (the Standard Webhooks specification's bounds).
    public static let keyBytes = 24...64

    /// Reads and parses a file; errors start with the file's name.
    public static func load(file path: String) throws(HearthError) -> FunctionsFile {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw .invalidArgument("cannot read the functions file \(path)")
        }
        do {
            return try parse(JSON.parse(Array(bytes)))
        } catch {
            throw .invalidArgument("functions file \(path): \(error.message)")
        }
    }

    /// Parses the file's JSON.
    public static func parse(_ json: JSON) throws(HearthError) -> FunctionsFile {
        let top = try object(json, at: "the functions file", keys: ["endpoints", "triggers", "schedules", "timers"])
        var endpoints: [String: Endpoint] = [:]
        if let value = top["endpoints"] {
            guard case .object(let pairs) = value else { throw .invalidArgument("endpoints must be an object of endpoints by name") }
            for (name, body) in pairs {
                let place = "endpoints.\(name.prefix(64))"
                try checkName(name, at: place)
                endpoints[name] = try endpoint(name, body, at: place)
            }
        }
        var names: Set<String> = []
        var triggers: [Trigger] = []
        for (k, item) in try array(top["triggers"], "triggers").enumerated() {
            let place = "triggers[\(k)]"
            let fields = try object(item, at: place, keys: ["name", "on", "path", "endpoint"])
            let name = try uniqueName(fields, at: place, &names)
            let onText = try string(fields["on"], "\(place).on")
            guard let on = Event(rawValue: onText) else {
                throw .invalidArgument("\(place).on: unknown event '\(onText.prefix(64))' (expected one of \(Event.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            var path: PathPattern?
            if on.isUser {
                if fields["path"] != nil { throw .invalidArgument("\(place).path: a \(on.rawValue) trigger takes no path") }
            } else {
                path = try PathPattern(string(fields["path"], "\(place).path"), documents: on.isDocument, at: "\(place).path")
            }
            triggers.append(Trigger(name: name, on: on, path: path,
                                    endpoint: try endpointName(fields, endpoints, at: place)))
        }
        var schedules: [Schedule] = []
        for (k, item) in try array(top["schedules"], "schedules").enumerated() {
            let place = "schedules[\(k)]"
            let fields = try object(item, at: place, keys: ["name", "cron", "timeZone", "endpoint"])
            let name = try uniqueName(fields, at: place, &names)
            let cron = try CronExpression(string(fields["cron"], "\(place).cron"), at: "\(place).cron")
            var zone = TimeZone(identifier: "UTC")!
            if let value = fields["timeZone"] {
                let text = try string(value, "\(place).timeZone")
                guard let named = TimeZone(identifier: text) else {
                    throw .invalidArgument("\(place).timeZone: unknown time zone '\(text.prefix(64))' (an IANA name such as Europe/Paris)")
                }
                zone = named
            }
            schedules.append(Schedule(name: name, cron: cron, timeZone: zone, endpoint: try endpointName(fields, endpoints, at: place)))
        }
        var timers: [Timer] = []
        for (k, item) in try array(top["timers"], "timers").enumerated() {
            let place = "timers[\(k)]"
            let fields = try object(item, at: place, keys: ["name", "path", "field", "endpoint"])
            let name = try uniqueName(fields, at: place, &names)
            let path = try PathPattern(string(fields["path"], "\(place).path"), documents: true, at: "\(place).path")
            let fieldText = try string(fields["field"], "\(place).field")
            let field: FieldPath
            do { field = try FieldPath(parsing: fieldText) } catch { throw .invalidArgument("\(place).field: \(error.message)") }
            timers.append(Timer(name: name, path: path, field: field, endpoint: try endpointName(fields, endpoints, at: place)))
        }
        return FunctionsFile(endpoints: endpoints, triggers: triggers, schedules: schedules, timers: timers)
    }

    static func endpoint(_ name: String, _ json: JSON, at place: String) throws(HearthError) -> Endpoint {
        let fields = try object(json, at: place, keys: ["url", "secret", "identity"])
        let text = try string(fields["url"], "\(place).url")
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty else {
            throw .invalidArgument("\(place).url: '\(text.prefix(200))' is not an http:// or https:// URL with a host")
        }
        let secret = try string(fields["secret"], "\(place).secret")
        guard secret.hasPrefix("whsec_") else {
            throw .invalidArgument("\(place).secret must be whsec_ followed by the key in base64 (a Standard Webhooks secret)")
        }
        guard let key = Base64.decode(String(secret.dropFirst("whsec_".count))) else {
            throw .invalidArgument("\(place).secret: the part after whsec_ is not base64")
        }
        guard keyBytes.contains(key.count) else {
            throw .invalidArgument("\(place).secret: the key is \(key.count) byte(s); it must be \(keyBytes.lowerBound) to \(keyBytes.upperBound) random bytes (for example: openssl rand -base64 32)")
        }
        var identity: Identity?
        if let value = fields["identity"] {
            let body = try object(value, at: "\(place).identity", keys: ["uid", "claims"])
            let uid = try string(body["uid"], "\(place).identity.uid")
            do { try AuthService.validateUID(uid) } catch { throw .invalidArgument("\(place).identity.uid: \(error.message)") }
            var claims: [String: Value] = [:]
            if let json = body["claims"] {
                guard case .object = json else { throw .invalidArgument("\(place).identity.claims must be an object") }
                do { claims = try Value.decodeFields(json) } catch {
                    throw .invalidArgument("\(place).identity.claims: \(error.message)")
                }
                // Its message starts with `claims:`.
                do { try AuthService.validateClaims(claims) } catch { throw .invalidArgument("\(place).identity.\(error.message)") }
            }
            identity = Identity(uid: uid, claims: claims)
        }
        return Endpoint(name: name, url: url, key: key, identity: identity)
    }

    static func object(_ json: JSON, at place: String, keys: [String]) throws(HearthError) -> [String: JSON] {
        guard case .object(let pairs) = json else { throw .invalidArgument("\(place) must be an object, got \(json.kind)") }
        var out: [String: JSON] = [:]
        for (key, value) in pairs {
            guard keys.contains(key) else {
                throw .invalidArgument("unknown key '\(key.prefix(64))' in \(place) (expected: \(keys.joined(separator: ", ")))")
            }
            out[key] = value
        }
        return out
    }

    static func array(_ json: JSON?, _ place: String) throws(HearthError) -> [JSON] {
        guard let json else { return [] }
        guard case .array(let items) = json else { throw .invalidArgument("\(place) must be an array, got \(json.kind)") }
        return items
    }

    static func string(_ json: JSON?, _ place: String) throws(HearthError) -> String {
        guard let json else { throw .invalidArgument("\(place) is missing") }
        guard case .string(let text) = json else { throw .invalidArgument("\(place) must be a string, got \(json.kind)") }
        return text
    }

    static func checkName(_ name: String, at place: String) throws(HearthError) {
        guard (1...100).contains(name.utf8.count), name.unicodeScalars.allSatisfy({
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
        }) else {
            throw .invalidArgument("\(place): the name '\(name.prefix(100))' must be 1 to 100 letters, digits, _ or -")
        }
    }

    static func uniqueName(_ fields: [String: JSON], at place: String, _ names: inout Set<String>) throws(HearthError) -> String {
        let name = try string(fields["name"], "\(place).name")
        try checkName(name, at: "\(place).name")
        guard names.insert(name).inserted else {
            throw .invalidArgument("\(place).name: '\(name)' names another trigger, schedule or timer already; names are unique")
        }
        return name
    }

    static func endpointName(_ fields: [String: JSON], _ endpoints: [String: Endpoint], at place: String) throws(HearthError) -> String {
        let name = try string(fields["endpoint"], "\(place).endpoint")
        guard endpoints[name] != nil else {
            let known = endpoints.keys.sorted()
            throw .invalidArgument("\(place).endpoint: unknown endpoint '\(name.prefix(64))'" +
                                   (known.isEmpty ? " (the file declares none)" : " (declared: \(known.joined(separator: ", ")))"))
        }
        return name
    }
}
