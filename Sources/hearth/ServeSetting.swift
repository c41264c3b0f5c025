import ArgumentParser

/// A setting of `hearth serve` and the ways to give it: a flag, a `HEARTH_*` environment variable and a
/// config-file key. The parser reads settings through this table and `hearth reference` prints it, so the
/// reference names exactly what the server takes.
struct ServeSetting: Sendable {
    /// The config-file key (`accessTokenLifetime`).
    let key: String
    /// The flag (`--access-token-lifetime`), or nil when the setting has none (secrets stay off command lines).
    let flag: String?
    /// The environment variable (`HEARTH_ACCESS_TOKEN_LIFETIME`), or nil when it has none.
    let variable: String?
    /// What the value is (`seconds`, `true or false`).
    let value: String
    /// What it sets, with its default.
    let summary: String
    /// Accepted so that old start scripts keep working, and ignored.
    let deprecated: Bool

    /// A setting whose flag and variable are named after its key (`autoIds`: `--auto-ids`, `HEARTH_AUTO_IDS`).
    init(_ key: String, flag: Bool = true, variable: Bool = true, value: String, _ summary: String, deprecated: Bool = false) {
        self.key = key
        self.flag = flag ? "--" + Self.words(key).joined(separator: "-") : nil
        self.variable = variable ? "HEARTH_" + Self.words(key).joined(separator: "_").uppercased() : nil
        self.value = value
        self.summary = summary
        self.deprecated = deprecated
    }

    /// The help of the setting's flag: its summary and its variable.
    var help: ArgumentHelp {
        let text = variable.map { "\(summary) (\($0))" } ?? summary
        return ArgumentHelp(text, visibility: deprecated ? .hidden : .default)
    }

    /// `argon2Memory` → `argon2`, `memory`: a new word at each capital letter, as ArgumentParser names flags.
    static func words(_ key: String) -> [String] {
        var words: [String] = [""]
        for c in key {
            if c.isUppercase, !words[words.count - 1].isEmpty { words.append("") }
            words[words.count - 1].append(c.lowercased())
        }
        return words
    }
}

extension ServeSetting {
    static let data = ServeSetting("data", value: "folder",
        "Data folder (default ./hearth-data; also the default of hearth users, fixtures, import and export).")
    static let host = ServeSetting("host", value: "address", "Address to listen on (default 127.0.0.1).")
    static let port = ServeSetting("port", value: "0-65535", "Port to listen on (default 8080; 0 picks a free one).")
    static let grpcPort = ServeSetting("grpcPort", value: "0-65535",
        "Port of Firestore's gRPC service, for Firestore's own client libraries (default: none; docs/firestore-compat.md).")
    static let adminKey = ServeSetting("adminKey", flag: false, value: "string",
        "The admin key (default: generated once and kept in DATA/admin.key, mode 0600).")
    static let metricsKey = ServeSetting("metricsKey", flag: false, value: "string, 32+ characters",
        "A key /metrics asks for (default: none, /metrics answers anyone who can reach the server).")
    static let synchronous = ServeSetting("synchronous", value: "NORMAL or FULL",
        "Durability: NORMAL (default; survives process crashes, WAL synced within 50 ms) or FULL (every acknowledged commit synced to disk).")
    static let logLevel = ServeSetting("logLevel", value: "level",
        "Log level: trace, debug, info, notice, warning, error, critical (default info).")
    static let indexWrites = ServeSetting("indexWrites", value: "deferred or immediate",
        "Ignored: every commit writes its own field-index rows; the server prints a warning and starts.", deprecated: true)
    static let autoIds = ServeSetting("autoIds", value: "ordered or random",
        "Ids of documents created without one: ordered (default; 8 characters of the creation time, then 12 random, so they sort by creation and new documents are appended to the store's indexes) or random (Firestore's 20 random characters; an id reveals nothing).")
    static let dev = ServeSetting("dev", variable: false, value: "true or false",
        "Development mode: denials name the deciding rule (default false).")
    static let rules = ServeSetting("rules", value: "file", "Security rules file; reloaded when it changes or on SIGHUP (default: none, only the admin key may read or write).")
    static let indexes = ServeSetting("indexes", value: "file",
        "Composite indexes and single-field overrides (Firestore's firestore.indexes.json format); entries are built or dropped at start.")
    static let argon2Memory = ServeSetting("argon2Memory", value: "KiB, 8-1048576",
        "Argon2id memory cost in KiB for new password hashes (default 19456, OWASP's minimum).")
    static let argon2Iterations = ServeSetting("argon2Iterations", value: "1-64", "Argon2id iterations (default 2).")
    static let argon2Parallelism = ServeSetting("argon2Parallelism", value: "1-16", "Argon2id parallelism (default 1).")
    static let accessTokenLifetime = ServeSetting("accessTokenLifetime", value: "seconds",
        "Seconds an access token works (default 3600).")
    static let refreshTokenLifetime = ServeSetting("refreshTokenLifetime", value: "seconds",
        "Seconds a refresh token works (default 2592000, 30 days).")
    static let trustForwardedFor = ServeSetting("trustForwardedFor", value: "true or false",
        "Take the client address for throttling from X-Forwarded-For (only behind a trusted proxy; default false).")
    static let idleTimeout = ServeSetting("idleTimeout", value: "seconds, 0.1-86400",
        "Seconds a connection with nothing under way stays open (default 60).")
    static let requestHeadTimeout = ServeSetting("requestHeadTimeout", value: "seconds, 0.1-86400",
        "Seconds a request head may take to arrive whole, from its first byte, before a 408 (default 10).")
    static let requestBodyTimeout = ServeSetting("requestBodyTimeout", value: "seconds, 0.1-86400",
        "Seconds a request body may go without a byte before a 408 (default 30).")

    static let corsOrigin = ServeSetting("corsOrigin", value: "origin, repeatable",
        "A web origin browsers may call the server from (CORS): https://app.example.com, https://*.example.com for its subdomains, or * for any; repeat the flag, or separate origins with commas in the variable or a config-file list (default: none, no CORS headers).")
    static let tlsCert = ServeSetting("tlsCert", value: "PEM file",
        "Serve HTTPS (and WSS, and TLS on the gRPC port) with this certificate, then any intermediates; needs tlsKey; reloaded on SIGHUP (default: none, plain HTTP).")
    static let tlsKey = ServeSetting("tlsKey", value: "PEM file", "The private key of tlsCert; needs tlsCert.")
    static let maxFileSize = ServeSetting("maxFileSize", value: "bytes",
        "Largest object a PUT /v1/files may store (default 104857600, 100 MiB); a larger Content-Length is refused with 413 before the body is read.")
    static let smtpUrl = ServeSetting("smtpUrl", value: "URL",
        "Deliver account messages and app email over SMTP: smtp://[user:password@]host[:port][?starttls=required] (STARTTLS when offered) or smtps://… (TLS from the start); default: none, messages go to DATA/outbox.ndjson.")
    static let mailFrom = ServeSetting("mailFrom", value: "address",
        "Sender of every message, as name@example.com or \"Name <name@example.com>\" (required with smtpUrl).")
    static let smtpCaFile = ServeSetting("smtpCaFile", value: "PEM file",
        "Certificate authorities to trust for the SMTP server's TLS besides the system's (a private relay).")
    static let mailTemplates = ServeSetting("mailTemplates", value: "folder",
        "Mustache templates replacing the built-in account messages and the pages behind their links, one NAME.mustache file each (docs/messages.md); a template that does not parse stops the start, naming its file.")
    static let publicUrl = ServeSetting("publicUrl", value: "URL",
        "Where people reach this server, the start of the links in account messages, as https://hearth.example.com (default: http://HOST:PORT it listens on).")
    static let appName = ServeSetting("appName", value: "text", "The app's name in account messages and pages (default Hearth).")
    static let functions = ServeSetting("functions", value: "file",
        "Functions file: endpoints, and the triggers whose events are sent to them as signed webhooks (docs/functions.md); reloaded when it changes or on SIGHUP (default: none).")
    static let functionsRetryDelay = ServeSetting("functionsRetryDelay", value: "seconds",
        "Delay before a failed function event is tried again, doubling with each attempt up to an hour (default 5).")
    static let functionsMaxAge = ServeSetting("functionsMaxAge", value: "seconds",
        "Age after which a function event that keeps failing is dead instead of tried again (default 86400, 24 hours).")
    static let functionsTimeout = ServeSetting("functionsTimeout", value: "seconds",
        "Seconds a function endpoint may take to answer before the attempt counts as failed (default 30).")
    static let functionsCaFile = ServeSetting("functionsCaFile", value: "PEM file",
        "Certificate authorities to trust for function endpoints' TLS besides the system's (endpoints behind a private CA).")

    static let apnsKey = ServeSetting("apnsKey", value: "file",
        "Send push notifications to Apple devices with this APNs signing key (the .p8 file, a P-256 key); needs apnsKeyId, apnsTeamId and apnsTopic (default: none, APNs devices get nothing).")
    static let apnsKeyId = ServeSetting("apnsKeyId", value: "id", "The APNs key's id (10 characters, shown beside the key in Apple's developer account).")
    static let apnsTeamId = ServeSetting("apnsTeamId", value: "id", "The Apple developer team id the key belongs to.")
    static let apnsTopic = ServeSetting("apnsTopic", value: "bundle id", "The app's bundle id, sent as apns-topic.")
    static let apnsUrl = ServeSetting("apnsUrl", value: "URL",
        "The APNs server: production (default, https://api.push.apple.com), sandbox (https://api.sandbox.push.apple.com, for development builds) or https://host:port.")
    static let apnsCaFile = ServeSetting("apnsCaFile", value: "PEM file",
        "Certificate authorities to trust for the APNs server besides the system's (a test server).")
    static let fcmCredentials = ServeSetting("fcmCredentials", value: "file",
        "Send push notifications through FCM with this service account key (JSON, from the Firebase console); its token_uri is used as given (default: none, FCM devices get nothing).")
    static let fcmUrl = ServeSetting("fcmUrl", value: "URL", "FCM's base URL (default https://fcm.googleapis.com).")

    /// Every setting, in the order the reference lists them.
    static let all: [ServeSetting] = [
        data, host, port, grpcPort, adminKey, metricsKey, synchronous, logLevel, autoIds, rules, indexes, dev, indexWrites,
        argon2Memory, argon2Iterations, argon2Parallelism, accessTokenLifetime, refreshTokenLifetime, trustForwardedFor,
        idleTimeout, requestHeadTimeout, requestBodyTimeout, corsOrigin, tlsCert, tlsKey, maxFileSize, smtpUrl, mailFrom, smtpCaFile,
        mailTemplates, publicUrl, appName, functions, functionsRetryDelay, functionsMaxAge, functionsTimeout, functionsCaFile,
        apnsKey, apnsKeyId, apnsTeamId, apnsTopic, apnsUrl, apnsCaFile, fcmCredentials, fcmUrl,
    ]

    /// Where settings come from, in order: flags, then `HEARTH_*` variables, then the config file.
    struct Sources {
        /// The process's environment.
        var environment: [String: String]
        /// The config file's keys and values (as text).
        var file: [String: String]

        /// The setting's value: the flag's if given, else the variable's, else the file's.
        func value(_ flag: String?, _ setting: ServeSetting) -> String? {
            flag ?? setting.variable.flatMap { environment[$0] } ?? file[setting.key]
        }
    }
}
