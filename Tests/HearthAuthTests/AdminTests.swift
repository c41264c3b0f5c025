import Foundation
import HearthCore
import HearthTesting
import Testing
@testable import HearthAuth

@Suite struct AdminTests {
    @Test func createListAndDeleteUsers() async throws {
        let f = Fixture.service()
        let events = f.service.revocations.events()
        let alice = try await f.service.createUser(.init(uid: "alice", email: "alice@example.com", password: "password1",
                                                         claims: ["role": .string("owner")]))
        #expect(alice.uid == "alice" && alice.claims["role"] == .string("owner"))
        _ = try await f.service.createUser(.init(uid: "bob"))
        for i in 0..<5 { _ = try await f.service.createUser(.init(uid: "user\(i)")) }
        #expect(await caught { try await f.service.createUser(.init(uid: "alice")) }?.code == .alreadyExists)
        #expect(await caught { try await f.service.createUser(.init(email: "ALICE@example.com")) }?.code == .alreadyExists)
        #expect(await caught { try await f.service.createUser(.init(uid: "a/b")) }?.code == .invalidArgument)
        #expect(await caught { try await f.service.createUser(.init(claims: ["sub": .null])) }?.code == .invalidArgument)

        let page1 = try await f.service.listUsers(pageSize: 3)
        #expect(page1.users.map(\.uid) == ["alice", "bob", "user0"])
        let page2 = try await f.service.listUsers(pageSize: 3, pageToken: page1.nextPageToken)
        #expect(page2.users.map(\.uid) == ["user1", "user2", "user3"])
        let page3 = try await f.service.listUsers(pageSize: 3, pageToken: page2.nextPageToken)
        #expect(page3.users.map(\.uid) == ["user4"] && page3.nextPageToken == nil)
        guard case .array(let listed)? = page1.json["users"] else { Issue.record("no users array"); return }
        #expect(listed.first?["claims"] == JSON.object([("role", JSON.string("owner"))]))
        #expect(await caught { try await f.service.listUsers(pageSize: 0) }?.code == .invalidArgument)
        #expect(await caught { try await f.service.listUsers(pageToken: "!!") }?.code == .invalidArgument)

        let session = try await f.service.logIn(email: "alice@example.com", password: "password1")
        try await f.service.deleteUser(uid: "alice")
        #expect(await caught { try f.service.authenticate(accessToken: session.token) }?.code == .unauthenticated)
        #expect(await caught { try await f.service.deleteUser(uid: "alice") }?.code == .notFound)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == RevocationEvent(uid: "alice", sessionIDs: nil, reason: .accountDeleted))
    }

    @Test func claimsApplyAtOnce() async throws {
        let f = Fixture.service()
        let a = try await f.service.signUp(email: "yan@example.com", password: "password1")
        try await f.service.setClaims(uid: a.user.uid, claims: ["admin": .bool(true), "tier": .int(3)])
        let (identity, _) = try f.service.authenticate(accessToken: a.token)
        guard case .user(_, let token) = identity else { Issue.record("not a user"); return }
        #expect(token["admin"] == .bool(true) && token["tier"] == .int(3))
        #expect(await caught { try await f.service.setClaims(uid: a.user.uid, claims: ["firebase": .null]) }?.code == .invalidArgument)
        #expect(await caught { try await f.service.setClaims(uid: "ghost", claims: [:]) }?.code == .notFound)
    }

    @Test func adminRevokesSessions() async throws {
        let f = Fixture.service()
        let a = try await f.service.signUp(email: "zed@example.com", password: "password1")
        _ = try await f.service.logIn(email: "zed@example.com", password: "password1")
        #expect(try await f.service.revokeSessions(uid: a.user.uid) == 2)
        #expect(await caught { try f.service.authenticate(accessToken: a.token) }?.code == .unauthenticated)
        #expect(await caught { try await f.service.refresh(refreshToken: a.refreshToken) }?.code == .unauthenticated)
        _ = try await f.service.logIn(email: "zed@example.com", password: "password1")
    }
}

@Suite struct AdminKeyTests {
    func temporaryDirectory() -> String {
        TestFolders.path("hearth-auth-test")
    }

    @Test func generatesAKeyFileWithMode0600AndReloadsIt() throws {
        let directory = temporaryDirectory() + "/nested/data"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let created = try AdminKey.loadOrCreate(dataDirectory: directory, configured: nil)
        let path = directory + "/admin.key"
        #expect(created.source == .created(path: path))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let key = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("hak_") && Tokens.isWellFormed(key, .adminKey))
        #expect(created.matches(key))
        #expect(created.matches(authorization: "Bearer " + key))
        #expect(created.matches(authorization: "bearer  " + key))
        #expect(!created.matches(authorization: "Basic " + key))
        #expect(!created.matches(authorization: "Bearer " + key + "x"))
        #expect(!created.matches(""))

        // A second start reads the same key, and tightens a file others could read.
        chmod(path, 0o644)
        let loaded = try AdminKey.loadOrCreate(dataDirectory: directory, configured: nil)
        #expect(loaded.source == .loaded(path: path))
        #expect(loaded.matches(key))
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
    }

    @Test func configuredKeyWins() throws {
        let directory = temporaryDirectory()
        let configured = "my-configured-admin-key-of-enough-length"
        let key = try AdminKey.loadOrCreate(dataDirectory: directory, configured: configured)
        #expect(key.source == .configured)
        #expect(key.matches(configured) && !key.matches(configured.uppercased()))
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(throws: HearthError.self) { try AdminKey(key: "too-short") }
        #expect(throws: HearthError.self) { try AdminKey(key: "has a space in it but is long enough to pass") }
    }

    @Test func bearerParsing() {
        #expect(AdminKey.bearerToken("Bearer abc") == "abc")
        #expect(AdminKey.bearerToken("BEARER abc ") == "abc")
        #expect(AdminKey.bearerToken("Bearer ") == nil)
        #expect(AdminKey.bearerToken("Token abc") == nil)
    }
}

@Suite struct StorageTests {
    @Test func memoryStorageConforms() async throws {
        let failures = try await AuthStorageConformance.run { MemoryAuthStorage() }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}

@Suite struct CreationThrottleTests {
    @Test func oneAddressCannotCreateAccountsWithoutBound() async throws {
        let configuration = AuthService.Configuration(
            creationThrottle: .init(freeAccountFailures: 0, freeAddressFailures: 3, baseDelay: .seconds(5)))
        let f = Fixture.service(configuration)
        for _ in 0..<3 { _ = try await f.service.signInAnonymously(clientAddress: "1.1.1.1") }
        _ = try await f.service.signUp(email: "one@example.com", password: "password1", clientAddress: "1.1.1.1")
        let error = await caught { try await f.service.signInAnonymously(clientAddress: "1.1.1.1") }
        #expect(error?.code == .resourceExhausted && error?.retryAfter == 5)
        _ = try await f.service.signInAnonymously(clientAddress: "2.2.2.2")
        f.clock.advance(seconds: 5)
        _ = try await f.service.signInAnonymously(clientAddress: "1.1.1.1")
    }

    @Test func adminPasswordNeedsAnEmail() async {
        let f = Fixture.service()
        #expect(await caught { try await f.service.createUser(.init(uid: "x", password: "password1")) }
            == .invalidArgument("password needs an email to sign in with"))
    }
}
