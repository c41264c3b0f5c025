import HearthCore
import Testing
@testable import HearthAuth

@Suite struct TokensTests {
    @Test(arguments: Tokens.Kind.allCases)
    func tokensHaveAPrefixAnd256RandomBits(_ kind: Tokens.Kind) {
        let token = Tokens.generate(kind)
        #expect(token.hasPrefix(kind.prefix))
        #expect(token.utf8.count == kind.prefix.utf8.count + 43)
        #expect(Tokens.isWellFormed(token, kind))
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        #expect(Set((0..<200).map { _ in Tokens.generate(kind) }).count == 200)
    }

    @Test func malformedTokensAreRecognised() {
        let good = Tokens.generate(.access)
        #expect(!Tokens.isWellFormed(good, .refresh))
        #expect(!Tokens.isWellFormed(String(good.dropLast()), .access))
        #expect(!Tokens.isWellFormed(good + "A", .access))
        #expect(!Tokens.isWellFormed(String(good.dropLast()) + "!", .access))
        #expect(!Tokens.isWellFormed("", .access))
        #expect(!Tokens.isWellFormed("hat_", .access))
    }

    @Test func hashesAreSHA256() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        #expect(Tokens.hash("abc").hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let h = Tokens.hash(Tokens.generate(.refresh))
        #expect(TokenHash(hex: h.hex) == h)
        #expect(TokenHash(hex: "xyz") == nil)
        #expect(!h.description.contains(h.hex))
    }

    @Test func constantTimeComparison() {
        #expect(Tokens.constantTimeEquals("same", "same"))
        #expect(!Tokens.constantTimeEquals("same", "sama"))
        #expect(!Tokens.constantTimeEquals("same", "same-but-longer"))
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(!ConstantTime.equals([UInt8](), [0]))
    }

    @Test func randomBytesHaveTheAskedLength() {
        for n in [0, 1, 7, 8, 9, 32, 33] { #expect(Tokens.randomBytes(n).count == n) }
    }
}
