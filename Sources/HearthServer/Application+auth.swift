import HearthAuth
import HearthCore
import HearthStore
import Hummingbird
import Logging
import ServiceLifecycle

/// The accounts part of the application: the service over the store's SQLite file, its routes and its
/// background services.
struct AccountsAssembly {
    let auth: AuthService
    let services: [any Service]

    init(configuration: ServerConfiguration, store: Store, logger: Logger) throws {
        let hasher = try PasswordHasher(configuration: configuration.passwordHashing)
        let storage = SQLiteAuthStorage(store: store, logger: logger)
        auth = AuthService(storage: storage, hasher: hasher, configuration: configuration.auth,
                           now: configuration.authClock)
        services = [
            OutboxService(auth: auth, mailbox: OutboxFile(dataDirectory: configuration.dataDirectory),
                          interval: .seconds(max(0.01, configuration.outboxInterval)), logger: logger),
            SessionSweeper(auth: auth, interval: .seconds(max(0.01, configuration.sweepInterval)), logger: logger),
        ]
    }

    func register(on router: Router<HearthRequestContext>, configuration: ServerConfiguration) {
        AuthRoutes(auth: auth, clientAddress: ClientAddress(trustForwardedFor: configuration.trustForwardedFor))
            .register(on: router)
        AdminUserRoutes(auth: auth).register(on: router)
    }
}
