import HearthCore
import Testing
@testable import HearthAuth

@Suite struct PasswordHasherTests {
    // Produced by the reference `argon2` tool: `echo -n "hunter2-correct horse" | argon2 hearth-kat-salt1 -id -t 2 -k 64 -p 1 -l 32 -e`.
    static let smallKAT = "$argon2id$v=19$m=64,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU"
    // `echo -n password | argon2 somesalt -id -t 2 -k 19456 -p 1 -l 32 -e` (the default parameters).
    static let defaultKAT = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ$PL01amPyeUuxG7H0vIr5X+qHkZvWnHmGBGXFYvh8z2E"

    @Test func knownAnswerMatchesTheReferenceTool() throws {
        let configuration = PasswordHasher.Configuration(memoryKiB: 64, iterations: 2, parallelism: 1)
        let phc = try PasswordHasher.hashNow("hunter2-correct horse", salt: Array("hearth-kat-salt1".utf8),
                                             configuration: configuration)
        #expect(phc.text == Self.smallKAT)
    }

    @Test func knownAnswerAtTheDefaultParameters() async throws {
        let hasher = try PasswordHasher(pool: Fixture.pool)
        #expect(hasher.configuration == PasswordHasher.Configuration(memoryKiB: 19_456, iterations: 2, parallelism: 1))
        let phc = try PasswordHasher.hashNow("password", salt: Array("somesalt".utf8), configuration: hasher.configuration)
        #expect(phc.text == Self.defaultKAT)
        #expect(try await hasher.verify("password", against: Self.defaultKAT))
        #expect(try await !hasher.verify("Password", against: Self.defaultKAT))
        #expect(hasher.needsRehash(Self.defaultKAT))  // an 8-byte salt, not the configured 16
        let fresh = try await hasher.hash("password")
        #expect(fresh.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(!hasher.needsRehash(fresh))
        #expect(try await hasher.verify("password", against: fresh))
    }

    @Test func verifiesReferenceHashesAndRejectsWrongPasswords() async throws {
        let hasher = Fixture.hasher()
        #expect(try await hasher.verify("hunter2-correct horse", against: Self.smallKAT))
        #expect(try await !hasher.verify("hunter2-correct horsE", against: Self.smallKAT))
        #expect(try await !hasher.verify("", against: Self.smallKAT))
    }

    @Test func hashesAreSaltedAndRoundTrip() async throws {
        let hasher = Fixture.hasher()
        let a = try await hasher.hash("same password")
        let b = try await hasher.hash("same password")
        #expect(a != b)
        #expect(try await hasher.verify("same password", against: a))
        #expect(try await hasher.verify("same password", against: b))
        let parsed = try #require(PHCString(a))
        #expect(parsed.salt.count == 16 && parsed.hash.count == 32)
        #expect(parsed.text == a)
    }

    @Test func needsRehashWhenParametersChange() throws {
        let fast = Fixture.hasher()
        let slower = Fixture.hasher(.init(memoryKiB: 128, iterations: 1, parallelism: 1))
        let phc = try PasswordHasher.hashNow("x", salt: Array("saltsalt".utf8), configuration: fast.configuration)
        #expect(fast.needsRehash(phc.text) == true)  // 8-byte salt differs from the configured 16
        let own = try PasswordHasher.hashNow("x", salt: Tokens.randomBytes(16), configuration: fast.configuration)
        #expect(!fast.needsRehash(own.text))
        #expect(slower.needsRehash(own.text))
        #expect(fast.needsRehash("not a hash"))
    }

    @Test(arguments: [
        "",
        "$argon2i$v=19$m=64,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=16$m=64,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=19$t=2,m=64,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=19$m=064,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=19$m=4194304,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=19$m=64,t=1000,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=19$m=64,t=2,p=1$aGVh$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=19$m=64,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ==$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU",
        "$argon2id$v=19$m=64,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIx!",
        "$argon2id$v=19$m=64,t=2,p=1$aGVhcnRoLWthdC1zYWx0MQ$fe+RTnIxjOxW64GmNzlgvIZSA8NR4s8Thl/xlsloAVU$extra",
    ])
    func malformedOrUnboundedHashesAreRefused(_ text: String) async throws {
        #expect(PHCString(text) == nil)
        #expect(try await !Fixture.hasher().verify("hunter2-correct horse", against: text))
    }

    @Test func dummyHashCostsARealVerification() async throws {
        let hasher = Fixture.hasher()
        let dummy = hasher.makeDummyHash()
        let parsed = try #require(PHCString(dummy))
        #expect(parsed.memoryKiB == hasher.configuration.memoryKiB)
        #expect(try await !hasher.verify("anything", against: dummy))
    }

    @Test func configurationIsValidated() {
        #expect(throws: HearthError.self) { try PasswordHasher(configuration: .init(memoryKiB: 4)) }
        #expect(throws: HearthError.self) { try PasswordHasher(configuration: .init(iterations: 0)) }
        #expect(throws: HearthError.self) { try PasswordHasher(configuration: .init(parallelism: 0)) }
        #expect(throws: HearthError.self) { try PasswordHasher(configuration: .init(saltLength: 4)) }
    }

    @Test func oversizedPasswordsAreRefusedBeforeHashing() async {
        let error = await caught { try await Fixture.hasher().hash(String(repeating: "x", count: 2_000)) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("xxxx") == false)
    }
}
