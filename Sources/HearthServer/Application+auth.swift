import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird
import Logging
import ServiceLifecycle

/// The accounts part of the application: the service over the storage's accounts, its routes and its
/// background services.
struct AccountsAssembly {
    let auth: AuthService
    let services: [any Service]

    init(configuration: ServerConfiguration, storage: StorageBackend, logger: Logger) throws {
        let hasher = try PasswordHasher(configuration: configuration.passwordHashing)
        auth = AuthService(storage: storage.accounts, hasher: hasher, configuration: configuration.auth,
                           now: configuration.authClock)
        let interval = max(.milliseconds(10), configuration.outboxInterval)
        let outbox: any Service = if let mail = configuration.mail {
            MailDeliveryService(auth: auth, settings: mail, interval: interval, logger: logger)
        } else {
            OutboxService(auth: auth, mailbox: OutboxFile(dataDirectory: configuration.storage.dataDirectory),
                          interval: interval, logger: logger)
        }
        services = [
            outbox,
            SessionSweeper(auth: auth, interval: max(.milliseconds(10), configuration.sweepInterval), logger: logger),
        ]
    }

    func register(on router: Router<HearthRequestContext>, configuration: ServerConfiguration) {
        AuthRoutes(auth: auth, clientAddress: ClientAddress(trustForwardedFor: configuration.trustForwardedFor))
            .register(on: router)
        AdminUserRoutes(auth: auth).register(on: router)
        MessageRoutes(auth: auth).register(on: router)
    }
}
