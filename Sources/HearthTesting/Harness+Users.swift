import HearthCore
import HearthEngine
import Foundation

extension Harness {
    /// Logs a fixture user in over HTTP (`POST /v1/auth/login` with the fixture's email and password) and
    /// answers a client acting with the session's token, and the session.
    public func signIn(_ uid: String) async throws -> (client: HearthClient, session: SignedIn) {
        guard let user = fixture.users.first(where: { $0.uid == uid }) else {
            throw ExpectationFailure("no user '\(uid)' in the fixture; it has \(fixture.users.map(\.uid).joined(separator: ", "))")
        }
        let anonymous = client(as: .nobody)
        let session: SignedIn
        do {
            session = try await anonymous.loggedIn(user.email, user.password)
            await anonymous.close()
        } catch {
            await anonymous.close()
            throw error
        }
        return (client(as: .token(session.token)), session)
    }

    /// Makes an account with custom claims through the admin endpoint (`POST /v1/admin/users`), signs it in,
    /// and answers a client acting as it: a real signed-in user whose `request.auth.token` carries the claims.
    public func user(_ uid: String, claims: [String: Value] = [:]) async throws -> (client: HearthClient, session: SignedIn) {
        let email = "\(uid)@users.test"
        let password = "pw-" + makeAutoID()
        let body = JSON.object([("uid", .string(uid)), ("email", .string(email)), ("password", .string(password)),
                                ("emailVerified", .bool(true)), ("claims", (try? JSON.parse(Value.map(claims).wireBytes)) ?? .object([]))])
        let admin = client(as: .admin)
        let session: SignedIn
        do {
            try expectAllowed(try await admin.post("/v1/admin/users", body.text), "creating user \(uid)")
            session = try await admin.loggedIn(email, password)
            await admin.close()
        } catch {
            await admin.close()
            throw error
        }
        return (client(as: .token(session.token)), session)
    }
}

extension Harness {
    /// The token of the latest password-reset (or verification) message to an address in the development
    /// outbox, waiting for it to arrive; in-process backend only.
    public func outboxToken(to address: String, purpose: String = "password-reset", after count: Int = 0) async throws -> String {
        guard let server = lock.withLock({ server }) else {
            throw ExpectationFailure("the outbox is read with the in-process backend")
        }
        return try await server.waitForOutboxToken(to: address, purpose: purpose, after: count)
    }
}
