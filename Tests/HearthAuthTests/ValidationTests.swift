import HearthCore
import Testing
@testable import HearthAuth

@Suite struct ValidationTests {
    @Test func emailsAreTrimmedAndCompareCaseInsensitively() throws {
        let email = try EmailAddress("  Alice@Example.COM \n")
        #expect(email.original == "Alice@Example.COM")
        #expect(email.normalized == "alice@example.com")
        #expect(EmailAddress.normalize(" BOB@x.io ") == "bob@x.io")
        #expect(try EmailAddress("josé@exämple.fr").normalized == "josé@exämple.fr")
    }

    @Test(arguments: [
        ("", "required"), ("   ", "required"), ("alice", "exactly one '@'"), ("a@b@c.com", "exactly one '@'"),
        ("@example.com", "before '@'"), ("alice@", "domain"), ("alice@localhost", "domain"),
        ("alice@exa mple.com", "spaces"), ("al ice@example.com", "spaces"), ("alice@-x.com", "domain"),
        ("alice@x..com", "domain"), ("alice@example.com\u{0}", "control"),
    ])
    func badEmailsAreRefusedWithAClearMessage(_ raw: String, _ phrase: String) {
        do {
            _ = try EmailAddress(raw)
            Issue.record("accepted \(raw)")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.hasPrefix("email"))
            #expect(error.message.contains(phrase), "\(error.message)")
        }
    }

    @Test func oversizedEmailsAreRefused() {
        let long = String(repeating: "a", count: 250) + "@example.com"
        #expect(throws: HearthError.invalidArgument("email is longer than 254 bytes")) { try EmailAddress(long) }
        let longLocal = String(repeating: "a", count: 65) + "@example.com"
        #expect(throws: HearthError.self) { try EmailAddress(longLocal) }
    }

    @Test func passwordLengthBounds() throws {
        let policy = PasswordPolicy()
        try policy.check("12345678")
        try policy.check(String(repeating: "é", count: 128))
        #expect(throws: HearthError.invalidArgument("password is required")) { try policy.check("") }
        #expect(throws: HearthError.invalidArgument("password must be at least 8 characters")) { try policy.check("1234567") }
        #expect(throws: HearthError.invalidArgument("newPassword must be at most 128 characters")) {
            try policy.check(String(repeating: "x", count: 129), field: "newPassword")
        }
        // Bytes are bounded too, whatever the character count.
        #expect(throws: HearthError.self) { try PasswordPolicy(minLength: 1, maxLength: 5_000).check(String(repeating: "😀", count: 300)) }
        let custom = PasswordPolicy(minLength: 12, maxLength: 20)
        #expect(throws: HearthError.invalidArgument("password must be at least 12 characters")) { try custom.check("short-pass") }
    }

    @Test func offeredPasswordsOnlyNeedTheByteLimit() throws {
        try PasswordPolicy.checkOffered("x")
        #expect(throws: HearthError.self) { try PasswordPolicy.checkOffered("") }
        #expect(throws: HearthError.self) { try PasswordPolicy.checkOffered(String(repeating: "x", count: 1_025)) }
    }

    @Test func claimsMayNotUseReservedNamesOrBeTooLarge() throws {
        try AuthService.validateClaims(["admin": .bool(true), "roles": .array([.string("editor")])])
        for name in ["sub", "firebase", "email", "exp", "user_id"] {
            #expect(throws: HearthError.self) { try AuthService.validateClaims([name: .bool(true)]) }
        }
        #expect(throws: HearthError.self) { try AuthService.validateClaims(["blob": .string(String(repeating: "x", count: 1_000))]) }
        #expect(throws: HearthError.self) { try AuthService.validateClaims(["__x__": .null]) }
    }

    @Test func uidsMustBeDocumentIDs() throws {
        try AuthService.validateUID("alice")
        for bad in ["", "a/b", ".", "..", "__x__", String(repeating: "u", count: 129)] {
            #expect(throws: HearthError.self) { try AuthService.validateUID(bad) }
        }
    }
}
