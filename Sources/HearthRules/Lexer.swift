/// One token of the rules language.
struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case int(Int64)
        case float(Double)
        case string(String)
        case bytes([UInt8])
        /// Punctuation and operators, spelled as in the source (`&&`, `(`, `$(`, ...).
        case symbol(String)
        case endOfFile
        /// Something the lexer could not read; the message says why.
        case invalid(String)
    }

    let kind: Kind
    /// Byte offset where the token starts.
    let start: Int
    /// Byte offset just past the token.
    let end: Int

    func isSymbol(_ s: String) -> Bool {
        if case .symbol(let t) = kind { return t == s }
        return false
    }

    func isIdentifier(_ s: String) -> Bool {
        if case .identifier(let t) = kind { return t == s }
        return false
    }
}

/// Turns rules source bytes into tokens on demand; the parser drives it and switches it into
/// path mode for `match` patterns and path literals, whose segments are not ordinary tokens.
struct Lexer {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    private static let symbols2: Set<String> = ["&&", "||", "==", "!=", "<=", ">=", "$("]
    private static let symbols1: Set<UInt8> = Set("!-*/%+<>?:.,;()[]{}=".utf8)

    @inline(__always) private func peek(_ k: Int = 0) -> UInt8? {
        let i = position + k
        return i < bytes.count ? bytes[i] : nil
    }

    static func isIdentStart(_ c: UInt8) -> Bool {
        (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == UInt8(ascii: "_")
    }

    static func isIdentPart(_ c: UInt8) -> Bool { isIdentStart(c) || (c >= 48 && c <= 57) }

    static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    /// Skips whitespace and comments; returns an error token for an unterminated block comment.
    mutating func skipTrivia() -> Token? {
        while let c = peek() {
            if c == 32 || c == 9 || c == 10 || c == 13 || c == 12 {
                position += 1
            } else if c == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "/") {
                while let d = peek(), d != 10 { position += 1 }
            } else if c == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                let start = position
                position += 2
                var closed = false
                while let d = peek() {
                    if d == UInt8(ascii: "*"), peek(1) == UInt8(ascii: "/") { position += 2; closed = true; break }
                    position += 1
                }
                if !closed { return Token(kind: .invalid("unterminated block comment"), start: start, end: position) }
            } else {
                break
            }
        }
        return nil
    }

    /// The next token.
    mutating func next() -> Token {
        if let bad = skipTrivia() { return bad }
        let start = position
        guard let c = peek() else { return Token(kind: .endOfFile, start: start, end: start) }
        if (c == UInt8(ascii: "r") || c == UInt8(ascii: "R") || c == UInt8(ascii: "b") || c == UInt8(ascii: "B")),
           let q = peek(1), q == UInt8(ascii: "'") || q == UInt8(ascii: "\"") {
            position += 1
            let raw = c == UInt8(ascii: "r") || c == UInt8(ascii: "R")
            return lexString(start: start, raw: raw, bytesLiteral: !raw)
        }
        if Self.isIdentStart(c) {
            while let d = peek(), Self.isIdentPart(d) { position += 1 }
            return Token(kind: .identifier(String(decoding: bytes[start..<position], as: UTF8.self)), start: start, end: position)
        }
        if Self.isDigit(c) || (c == UInt8(ascii: ".") && peek(1).map(Self.isDigit) == true) {
            return lexNumber(start: start)
        }
        if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") {
            return lexString(start: start, raw: false, bytesLiteral: false)
        }
        if let d = peek(1) {
            let two = String(decoding: [c, d], as: UTF8.self)
            if Self.symbols2.contains(two) {
                position += 2
                return Token(kind: .symbol(two), start: start, end: position)
            }
        }
        if Self.symbols1.contains(c) {
            position += 1
            return Token(kind: .symbol(String(decoding: [c], as: UTF8.self)), start: start, end: position)
        }
        // Skip one whole UTF-8 scalar so that the error names a character, not a byte.
        position += 1
        while let d = peek(), d & 0xC0 == 0x80 { position += 1 }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        return Token(kind: .invalid("unexpected character '\(text)'"), start: start, end: position)
    }

    private mutating func lexNumber(start: Int) -> Token {
        if peek() == UInt8(ascii: "0"), let x = peek(1), x == UInt8(ascii: "x") || x == UInt8(ascii: "X") {
            position += 2
            let digitsStart = position
            var value: UInt64 = 0
            var overflow = false
            while let d = peek(), let h = Self.hexDigit(d) {
                let (m, o1) = value.multipliedReportingOverflow(by: 16)
                let (a, o2) = m.addingReportingOverflow(UInt64(h))
                overflow = overflow || o1 || o2
                value = a
                position += 1
            }
            if position == digitsStart { return Token(kind: .invalid("hex literal has no digits"), start: start, end: position) }
            if overflow || value > UInt64(Int64.max) {
                return Token(kind: .invalid("integer literal is out of range"), start: start, end: position)
            }
            return Token(kind: .int(Int64(value)), start: start, end: position)
        }
        var isFloat = false
        while let d = peek(), Self.isDigit(d) { position += 1 }
        if peek() == UInt8(ascii: "."), let d = peek(1), Self.isDigit(d) {
            isFloat = true
            position += 1
            while let d = peek(), Self.isDigit(d) { position += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var k = 1
            if let s = peek(1), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { k = 2 }
            if let d = peek(k), Self.isDigit(d) {
                isFloat = true
                position += k
                while let d = peek(), Self.isDigit(d) { position += 1 }
            }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isFloat {
            guard let v = Double(text) else { return Token(kind: .invalid("bad float literal '\(text)'"), start: start, end: position) }
            return Token(kind: .float(v), start: start, end: position)
        }
        guard let v = Int64(text) else {
            return Token(kind: .invalid("integer literal '\(text)' is out of range"), start: start, end: position)
        }
        return Token(kind: .int(v), start: start, end: position)
    }

    static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }

    private mutating func lexString(start: Int, raw: Bool, bytesLiteral: Bool) -> Token {
        let quote = bytes[position]
        position += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek() else {
                return Token(kind: .invalid("unterminated string literal"), start: start, end: position)
            }
            if c == quote { position += 1; break }
            if c == 10 { return Token(kind: .invalid("unterminated string literal"), start: start, end: position) }
            if c == UInt8(ascii: "\\"), !raw {
                let escStart = position
                position += 1
                guard let e = peek() else { continue }
                position += 1
                switch e {
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "t"): out.append(9)
                case UInt8(ascii: "r"): out.append(13)
                case UInt8(ascii: "a"): out.append(7)
                case UInt8(ascii: "b"): out.append(8)
                case UInt8(ascii: "f"): out.append(12)
                case UInt8(ascii: "v"): out.append(11)
                case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "?"), UInt8(ascii: "/"):
                    out.append(e)
                case UInt8(ascii: "x"), UInt8(ascii: "X"):
                    guard let h1 = peek().flatMap(Self.hexDigit), let h2 = peek(1).flatMap(Self.hexDigit) else {
                        return Token(kind: .invalid("\\x needs two hex digits"), start: escStart, end: position)
                    }
                    position += 2
                    let v = h1 << 4 | h2
                    if bytesLiteral { out.append(v) } else { appendScalar(UInt32(v), to: &out) }
                case UInt8(ascii: "u"), UInt8(ascii: "U"):
                    let n = e == UInt8(ascii: "u") ? 4 : 8
                    var v: UInt32 = 0
                    for k in 0..<n {
                        guard let h = peek(k).flatMap(Self.hexDigit) else {
                            return Token(kind: .invalid("\\\(e == UInt8(ascii: "u") ? "u" : "U") needs \(n) hex digits"), start: escStart, end: position)
                        }
                        v = v << 4 | UInt32(h)
                    }
                    position += n
                    guard Unicode.Scalar(v) != nil else {
                        return Token(kind: .invalid("escape names an invalid Unicode scalar"), start: escStart, end: position)
                    }
                    appendScalar(v, to: &out)
                case 48...55:
                    // Octal: exactly three digits, as in CEL.
                    guard let o2 = peek(), (48...55).contains(o2), let o3 = peek(1), (48...55).contains(o3) else {
                        return Token(kind: .invalid("octal escape needs three digits"), start: escStart, end: position)
                    }
                    position += 2
                    let v = UInt32(e - 48) << 6 | UInt32(o2 - 48) << 3 | UInt32(o3 - 48)
                    if bytesLiteral { out.append(UInt8(truncatingIfNeeded: v)) } else { appendScalar(v, to: &out) }
                default:
                    return Token(kind: .invalid("unknown escape sequence '\\\(Character(Unicode.Scalar(e)))'"), start: escStart, end: position)
                }
                continue
            }
            out.append(c)
            position += 1
        }
        if bytesLiteral { return Token(kind: .bytes(out), start: start, end: position) }
        guard let s = String(validating: out, as: UTF8.self) else {
            return Token(kind: .invalid("string literal is not valid UTF-8"), start: start, end: position)
        }
        return Token(kind: .string(s), start: start, end: position)
    }

    private func appendScalar(_ v: UInt32, to out: inout [UInt8]) {
        guard let scalar = Unicode.Scalar(v) else { return }
        out.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    // MARK: Path mode

    /// Characters allowed in a literal path segment (`users`, `my-coll`, `(default)`).
    static func isPathChar(_ c: UInt8) -> Bool {
        isIdentPart(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "~")
            || c == UInt8(ascii: "%") || c == UInt8(ascii: "@") || c == UInt8(ascii: "+") || c == UInt8(ascii: ":")
            || c == UInt8(ascii: "(") || c == UInt8(ascii: ")") || c >= 0x80
    }

    /// Reads a literal path segment at the current position (no trivia skipped); empty when none.
    mutating func pathLiteralSegment(allowParens: Bool) -> (text: String, start: Int) {
        let start = position
        while let c = peek(), Self.isPathChar(c) {
            if !allowParens, c == UInt8(ascii: "(") || c == UInt8(ascii: ")") { break }
            position += 1
        }
        return (String(decoding: bytes[start..<position], as: UTF8.self), start)
    }

    /// True when the next raw byte (no trivia) is `c`.
    func rawIs(_ c: Character) -> Bool { peek() == c.asciiValue }
    /// True when the next raw bytes (no trivia) are `s`.
    func rawHas(_ s: String) -> Bool {
        for (k, b) in s.utf8.enumerated() where peek(k) != b { return false }
        return true
    }
    /// Consumes `n` raw bytes.
    mutating func advance(_ n: Int) { position = min(bytes.count, position + n) }
    /// Skips spaces and tabs only (inside `{ x }` of a pattern).
    mutating func skipSpaces() { while let c = peek(), c == 32 || c == 9 { position += 1 } }
}
