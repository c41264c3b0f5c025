import Testing
@testable import HearthRules

@Suite struct LexerTests {
    @Test func lexesOperatorsAndLiterals() {
        var lexer = Lexer(bytes: Array("a && 'x\\n' 1.5 0x1F r'\\d' b'\\xFF'".utf8))
        var kinds: [Token.Kind] = []
        while true {
            let t = lexer.next()
            if case .endOfFile = t.kind { break }
            kinds.append(t.kind)
        }
        #expect(kinds == [.identifier("a"), .symbol("&&"), .string("x\n"), .float(1.5), .int(31), .string("\\d"), .bytes([0xFF])])
    }
}
