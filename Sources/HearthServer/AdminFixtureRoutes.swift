import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// Loading a fixture file into the running server with the admin key: what `hearth fixtures load` sends when a
/// server holds the data folder. The server's own `FixtureLoader` writes it, so open listeners see the
/// documents as they see any write. Any other caller gets 403 `permission-denied`.
struct AdminFixtureRoutes {
    let database: Database
    let auth: AuthService

    func register(on router: Router<HearthRequestContext>) {
        router.post("/v1/admin/fixtures") { request, context in
            guard context.identity.isAdmin else { throw HearthError.permissionDenied("loading fixtures needs the admin key") }
            let fixture = try FixtureFile(json: try await AuthRoutes.body(request, context))
            let report = try await FixtureLoader(database: database, auth: auth).load(fixture)
            return jsonResponse(report.json.serialized())
        }
    }
}
