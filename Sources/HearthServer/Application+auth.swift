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
    let accountMail: AccountMail
    let services: [any Service]

    /// The account messages' templates, checked before anything opens: a broken one stops the start.
    static func accountMail(_ configuration: ServerConfiguration, logger: Logger) throws(HearthError) -> AccountMail {
        let templates = try MailTemplates(folder: configuration.mailTemplates)
        if !templates.replaced.isEmpty {
            logger.info("mail templates loaded", metadata: [
                "folder": "\(configuration.mailTemplates ?? "")",
                "replaced": "\(templates.replaced.map(\.rawValue).sorted().joined(separator: ", "))"])
        }
        let publicURL = try configuration.publicURL.map { (url) throws(HearthError) in try AccountMail.publicBase(url) }
        return AccountMail(templates: templates, appName: configuration.appName, publicURL: publicURL)
    }

    init(configuration: ServerConfiguration, storage: StorageBackend, accountMail: AccountMail, logger: Logger) throws {
        let hasher = try PasswordHasher(configuration: configuration.passwordHashing)
        auth = AuthService(storage: storage.accounts, hasher: hasher, configuration: configuration.auth,
                           now: configuration.authClock)
        self.accountMail = accountMail
        let interval = max(.milliseconds(10), configuration.outboxInterval)
        let outbox: any Service = if let mail = configuration.mail {
            MailDeliveryService(auth: auth, settings: mail, accountMail: accountMail, interval: interval, logger: logger)
        } else {
            OutboxService(auth: auth, mailbox: OutboxFile(dataDirectory: configuration.storage.dataDirectory),
                          accountMail: accountMail, interval: interval, logger: logger)
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
        ActionPages(auth: auth, accountMail: accountMail).register(on: router)
    }
}
