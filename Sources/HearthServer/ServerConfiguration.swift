import HearthAuth
import HearthCore
import HearthEngine
import Logging

/// Everything `hearth serve` and the tests configure about a server.
public struct ServerConfiguration: Sendable {
    /// Address to listen on.
    public var host: String = "127.0.0.1"
    /// Port to listen on; 0 picks a free one (tests).
    public var port: Int = 8080
    /// Port of Firestore's gRPC service (`google.firestore.v1.Firestore`, docs/firestore-compat.md); nil serves
    /// none, 0 picks a free one (tests).
    public var grpcPort: Int?
    /// The storage: its data folder (which also holds the admin key and the outbox), durability, change-log
    /// retention and index definitions (those of `indexesFile` are loaded into it at start).
    public var storage = StorageConfiguration(dataDirectory: "./hearth-data")
    /// The admin key; when nil, read from (or generated into) the data folder.
    public var adminKey: String?
    /// When set, `/metrics` answers only `Authorization: Bearer <metrics key>` (or the admin key); nil leaves it
    /// open to anyone who can reach the server.
    public var metricsKey: String?
    /// Development mode: more detail in denials.
    public var dev: Bool = false
    /// Level for request logs (`debug` keeps them out of normal output).
    public var requestLogLevel: Logger.Level = .debug
    /// Level of the server's own logs.
    public var logLevel: Logger.Level = .info
    /// The security rules file; nil denies every caller but the admin key.
    public var rulesFile: String?
    /// Composite index definitions in Firestore's `firestore.indexes.json` format; nil keeps only the
    /// single-field indexes. Read at start: new indexes are built then, removed ones dropped.
    public var indexesFile: String?
    /// Time between two looks at the rules file for changes.
    public var rulesPollInterval: Duration = .seconds(1)
    /// Argon2id parameters for new password hashes (default OWASP's m=19 MiB, t=2, p=1).
    public var passwordHashing = PasswordHasher.Configuration()
    /// Token lifetimes, password policy and throttles of the account flows.
    public var auth = AuthService.Configuration()
    /// The accounts' clock; tests inject one to move time.
    public var authClock: @Sendable () -> Timestamp = { Timestamp.now() }
    /// Time between outbox deliveries (looks for due messages, with SMTP).
    public var outboxInterval: Duration = .seconds(1)
    /// SMTP delivery of the outbox; nil writes it to the development mailbox, `DATA/outbox.ndjson`.
    public var mail: MailSettings?
    /// A folder of Mustache templates replacing the built-in account messages and pages (`NAME.mustache`,
    /// docs/messages.md); nil keeps the built-in ones. Every template is parsed at start.
    public var mailTemplates: String?
    /// Where people reach the server, the start of the links in account messages
    /// (`https://hearth.example.com`); nil uses the address it listens on.
    public var publicURL: String?
    /// The app's name as the account messages and pages show it.
    public var appName = "Hearth"
    /// Push notifications through APNs and FCM (docs/messages.md); each service only when configured.
    public var push = PushSettings()
    /// The functions file (endpoints and triggers, docs/functions.md); reloaded like the rules file.
    public var functionsFile: String?
    /// How function events are delivered.
    public var functions = FunctionsSettings()
    /// The clock function timers and schedules read (tests pass one they move, `ManualClock.function`).
    public var functionsClock: @Sendable () -> Timestamp = { Timestamp.now() }
    /// Time between sweeps of ended sessions and expired one-time tokens.
    public var sweepInterval: Duration = .seconds(600)
    /// Whether throttles take the client address from `X-Forwarded-For` (its last entry) instead of the
    /// connection; only behind a reverse proxy that sets the header, since clients can forge it.
    public var trustForwardedFor = false
    /// Makes the log handlers; nil writes Hearth's lines to standard output. Tests capture logs with it.
    public var logHandlerFactory: (@Sendable (String) -> any LogHandler)?
    /// Live updates: limits and timings of `/v1/listen`.
    public var listen = ListenConfiguration()
    /// HTTP connections: how long one may stay idle, or take to send a request head or its body.
    public var connections = ConnectionConfiguration()
    /// The web origins a browser may call the server from (CORS); nil sends no CORS headers.
    public var cors: CORSPolicy?
    /// The certificate and key to serve HTTPS (and WSS, and TLS on the gRPC port) with, reloaded on SIGHUP;
    /// nil serves plain HTTP.
    public var tls: TLSFiles?
    /// Whether plain document reads (`GET /v1/docs/{document}`, no query string), cheap queries and plain
    /// single-document writes are answered on the connection's event loop, ahead of the router
    /// (`InlineAnswerHandler`). Off, every request is routed; the answers are the same either way.
    public var inlineAnswers = true
    /// How documents created without an id are named: `ordered` (default; ids sort by creation time) or
    /// `random` (Firestore's; ids reveal nothing). See `AutoIDs`.
    public var autoIDs: AutoIDs = .ordered
    /// The largest object a `PUT /v1/files` stores; a larger `Content-Length` is refused before the body is read.
    public var maxFileSize: Int64 = 100 << 20
    /// How long a resumable upload (`/v1/uploads`) may take from its creation; it is refused after, and removed
    /// by the next sweep (at start, then every `sweepInterval`).
    public var uploadLifetime: Duration = .seconds(24 * 3600)
    /// Makes the default configuration.
    public init() {}
}
