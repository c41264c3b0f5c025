/// Thrown inside the parser to unwind to the nearest statement, which records nothing more and resynchronizes.
struct ParseAbort: Error {}

/// A recursive-descent parser for whole rules files that recovers at statement boundaries, so one run
/// reports several errors. Recursion is bounded by `RulesLimits.maxExpressionDepth`.
struct Parser {
    let source: SourceText
    private var lexer: Lexer
    private var current: Token
    private(set) var diagnostics: [Diagnostic] = []
    private var nesting = 0

    init(source: SourceText) {
        self.source = source
        self.lexer = Lexer(bytes: source.bytes)
        self.current = Token(kind: .endOfFile, start: 0, end: 0)
        self.current = lexer.next()
    }

    /// Parses the whole file; problems are in `diagnostics`.
    mutating func parseFile() -> RulesFile {
        var file = RulesFile()
        if current.isIdentifier("rules_version") {
            do throws(ParseAbort) {
                advance()
                try expectSymbol("=", "expected '=' after rules_version")
                guard case .string(let v) = current.kind else {
                    error("expected '1' or '2' after rules_version =", at: current.start)
                    throw ParseAbort()
                }
                if v == "1" || v == "2" {
                    file.version = Int(v)!
                } else {
                    error("unsupported rules_version '\(v)'; expected '1' or '2'", at: current.start)
                }
                file.versionDeclared = true
                advance()
                try expectSymbol(";", "expected ';' after rules_version")
            } catch {
                synchronize()
                if current.isSymbol(";") { advance() }
            }
        }
        while !atEnd, !tooManyErrors {
            if current.isIdentifier("service") {
                let statementStart = current.start
                do throws(ParseAbort) { file.services.append(try parseService()) } catch {
                    synchronize()
                    if current.start == statementStart { advance() }
                    skipStray()
                }
            } else if current.isIdentifier("function") {
                // Firestore accepts functions at the top level of the file, before or after the service block.
                let statementStart = current.start
                do throws(ParseAbort) { file.functions.append(try parseFunction()) } catch {
                    recover(from: statementStart)
                    skipStray()
                }
            } else {
                if case .invalid(let message) = current.kind {
                    error(message, at: current.start)
                } else {
                    error("expected 'service' or 'function' at the top level, found \(describe(current))", at: current.start)
                }
                advance()
                synchronize()
                skipStray()
            }
        }
        return file
    }

    // MARK: Statements

    private mutating func parseService() throws(ParseAbort) -> ServiceDecl {
        let start = current.start
        advance()
        var name = try expectIdentifier("expected a service name such as cloud.firestore")
        while current.isSymbol(".") {
            advance()
            name += "." + (try expectIdentifier("expected a name after '.'"))
        }
        try expectSymbol("{", "expected '{' after the service name")
        let body = parseBlock(depth: 0)
        return ServiceDecl(name: name, body: body, start: start)
    }

    /// Parses statements up to and including the closing brace.
    private mutating func parseBlock(depth: Int) -> [Statement] {
        var body: [Statement] = []
        while !current.isSymbol("}") {
            if atEnd {
                error("expected '}' before the end of the file", at: current.start)
                return body
            }
            if tooManyErrors { return body }
            let statementStart = current.start
            do throws(ParseAbort) {
                if current.isIdentifier("match") {
                    body.append(.match(try parseMatch(depth: depth + 1)))
                } else if current.isIdentifier("allow") {
                    body.append(.allow(try parseAllow()))
                } else if current.isIdentifier("function") {
                    body.append(.function(try parseFunction()))
                } else {
                    if case .invalid(let message) = current.kind {
                        error(message, at: current.start)
                    } else {
                        error("expected 'match', 'allow' or 'function', found \(describe(current))", at: current.start)
                    }
                    throw ParseAbort()
                }
            } catch {
                recover(from: statementStart)
            }
        }
        advance()
        return body
    }

    private mutating func parseMatch(depth: Int) throws(ParseAbort) -> MatchDecl {
        let start = current.start
        // The pattern is read in path mode straight from the bytes after `match`.
        if let bad = lexer.skipTrivia() {
            error(bad.kindMessage, at: bad.start)
            throw ParseAbort()
        }
        guard lexer.rawIs("/") else {
            error("expected a path pattern starting with '/' after 'match'", at: lexer.position)
            current = lexer.next()
            throw ParseAbort()
        }
        var pattern: [PatternSegment] = []
        var starts: [Int] = []
        while lexer.rawIs("/") {
            lexer.advance(1)
            let segStart = lexer.position
            if pattern.count >= RulesLimits.maxPatternSegments {
                error("match pattern has more than \(RulesLimits.maxPatternSegments) segments", at: segStart)
                current = lexer.next()
                throw ParseAbort()
            }
            if lexer.rawIs("{") {
                lexer.advance(1)
                lexer.skipSpaces()
                let name = lexer.pathLiteralSegment(allowParens: false)
                guard !name.text.isEmpty, name.text.utf8.allSatisfy(Lexer.isIdentPart),
                      let first = name.text.utf8.first, Lexer.isIdentStart(first) else {
                    error("expected a wildcard name inside '{'", at: name.start)
                    current = lexer.next()
                    throw ParseAbort()
                }
                lexer.skipSpaces()
                var recursive = false
                if lexer.rawHas("=**") {
                    lexer.advance(3)
                    recursive = true
                    lexer.skipSpaces()
                }
                guard lexer.rawIs("}") else {
                    error("expected '}' to close the wildcard '{\(name.text)'", at: lexer.position)
                    current = lexer.next()
                    throw ParseAbort()
                }
                lexer.advance(1)
                pattern.append(recursive ? .recursive(name.text) : .wildcard(name.text))
            } else {
                let seg = lexer.pathLiteralSegment(allowParens: true)
                guard !seg.text.isEmpty else {
                    error("expected a path segment after '/'", at: segStart)
                    current = lexer.next()
                    throw ParseAbort()
                }
                pattern.append(.literal(seg.text))
            }
            starts.append(segStart)
        }
        current = lexer.next()
        if depth > RulesLimits.maxMatchDepth {
            error("match blocks are nested more than \(RulesLimits.maxMatchDepth) deep", at: start)
            // Skip the whole block, iteratively, so that deeper blocks do not each report again.
            var level = 0
            while !atEnd {
                if current.isSymbol("{") { level += 1 } else if current.isSymbol("}") {
                    level -= 1
                    if level <= 0 { advance(); break }
                }
                advance()
            }
            return MatchDecl(pattern: [], segmentStarts: [], body: [], start: start)
        }
        try expectSymbol("{", "expected '{' after the match pattern")
        let body = parseBlock(depth: depth)
        return MatchDecl(pattern: pattern, segmentStarts: starts, body: body, start: start)
    }

    private mutating func parseAllow() throws(ParseAbort) -> AllowDecl {
        let start = current.start
        advance()
        var methods: [(name: String, start: Int)] = []
        repeat {
            if !methods.isEmpty { advance() }
            let at = current.start
            let name = try expectIdentifier("expected a method (read, write, get, list, create, update, delete)")
            methods.append((name, at))
        } while current.isSymbol(",")
        var condition: Expr?
        if current.isSymbol(":") {
            advance()
            guard current.isIdentifier("if") else {
                error("expected 'if' after ':'", at: current.start)
                throw ParseAbort()
            }
            advance()
            condition = try parseExpression()
        }
        try endStatement("allow")
        return AllowDecl(methods: methods, condition: condition, start: start)
    }

    private mutating func parseFunction() throws(ParseAbort) -> FunctionDecl {
        let start = current.start
        advance()
        let name = try expectIdentifier("expected a function name")
        try expectSymbol("(", "expected '(' after the function name")
        var params: [String] = []
        if !current.isSymbol(")") {
            repeat {
                if !params.isEmpty { advance() }
                params.append(try expectIdentifier("expected a parameter name"))
            } while current.isSymbol(",")
        }
        try expectSymbol(")", "expected ')' after the parameters")
        try expectSymbol("{", "expected '{' to start the function body")
        var body: [FunctionStatement] = []
        var hadParseErrors = false
        while !current.isSymbol("}") {
            if atEnd { error("expected '}' to close function '\(name)'", at: current.start); throw ParseAbort() }
            if tooManyErrors { throw ParseAbort() }
            let at = current.start
            do throws(ParseAbort) {
                if current.isIdentifier("let") {
                    advance()
                    let variable = try expectIdentifier("expected a variable name after 'let'")
                    try expectSymbol("=", "expected '=' after 'let \(variable)'")
                    let value = try parseExpression()
                    try endStatement("let")
                    body.append(.binding(name: variable, value: value, start: at))
                } else if current.isIdentifier("return") {
                    advance()
                    let value = try parseExpression()
                    try endStatement("return")
                    body.append(.result(value, start: at))
                } else {
                    error("expected 'let' or 'return' in a function body, found \(describe(current))", at: at)
                    throw ParseAbort()
                }
            } catch {
                hadParseErrors = true
                recover(from: at)
            }
        }
        advance()
        return FunctionDecl(name: name, parameters: params, body: body, start: start, hadParseErrors: hadParseErrors)
    }

    /// A statement ends with ';'; before a closing brace or the next statement keyword it may be left out.
    private mutating func endStatement(_ what: String) throws(ParseAbort) {
        if current.isSymbol(";") { advance(); return }
        if current.isSymbol("}") || startsStatement(current) { return }
        error("expected ';' after the \(what) statement, found \(describe(current))", at: current.start)
        throw ParseAbort()
    }

    private func startsStatement(_ t: Token) -> Bool {
        guard case .identifier(let s) = t.kind else { return false }
        return s == "allow" || s == "match" || s == "function" || s == "let" || s == "return"
    }

    // MARK: Expressions

    mutating func parseExpression() throws(ParseAbort) -> Expr {
        nesting += 1
        defer { nesting -= 1 }
        if nesting > RulesLimits.maxExpressionDepth {
            error("expression is nested more than \(RulesLimits.maxExpressionDepth) deep", at: current.start)
            throw ParseAbort()
        }
        let cond = try parseBinary(minPrecedence: 1)
        guard current.isSymbol("?") else { return cond }
        advance()
        let then = try parseExpression()
        try expectSymbol(":", "expected ':' in the conditional expression")
        let other = try parseExpression()
        return try make(.conditional(cond, then, other), cond.start, other.end)
    }

    private mutating func binaryOperator() -> Expr.BinaryOp? {
        switch current.kind {
        case .symbol(let s): return Expr.BinaryOp(rawValue: s)
        case .identifier("in"): return .in
        default: return nil
        }
    }

    private mutating func parseBinary(minPrecedence: Int) throws(ParseAbort) -> Expr {
        var left = try parseUnary()
        while true {
            if current.isIdentifier("is"), minPrecedence <= 3 {
                advance()
                let typeStart = current.start
                let typeName = try expectIdentifier("expected a type name after 'is'")
                guard RulesTypeName.all.contains(typeName) else {
                    error("unknown type '\(typeName)' after 'is'", at: typeStart)
                    throw ParseAbort()
                }
                left = try make(.isType(left, typeName), left.start, previousEnd)
                continue
            }
            guard let op = binaryOperator(), op.precedence >= minPrecedence else { return left }
            advance()
            let right = try parseBinary(minPrecedence: op.precedence + 1)
            left = try make(.binary(op, left, right), left.start, right.end)
        }
    }

    private mutating func parseUnary() throws(ParseAbort) -> Expr {
        let start = current.start
        let op: Expr.UnaryOp
        if current.isSymbol("!") { op = .not } else if current.isSymbol("-") { op = .negate } else { return try parsePostfix() }
        nesting += 1
        defer { nesting -= 1 }
        if nesting > RulesLimits.maxExpressionDepth {
            error("expression is nested more than \(RulesLimits.maxExpressionDepth) deep", at: current.start)
            throw ParseAbort()
        }
        advance()
        // Fold `-literal` so that the most negative integer can be written.
        if op == .negate, case .int(let v) = current.kind {
            let end = current.end
            advance()
            return try parsePostfixTail(make(.int(0 &- v), start, end))
        }
        if op == .negate, case .invalid(let m) = current.kind, m.contains("out of range"),
           source.text(from: current.start, to: current.end) == "9223372036854775808" {
            let end = current.end
            advance()
            return try parsePostfixTail(make(.int(Int64.min), start, end))
        }
        if op == .negate, case .float(let v) = current.kind {
            let end = current.end
            advance()
            return try parsePostfixTail(make(.float(-v), start, end))
        }
        let operand = try parseUnary()
        return try make(.unary(op, operand), start, operand.end)
    }

    private mutating func parsePostfix() throws(ParseAbort) -> Expr {
        try parsePostfixTail(try parsePrimary())
    }

    private mutating func parsePostfixTail(_ base: Expr) throws(ParseAbort) -> Expr {
        var e = base
        while true {
            if current.isSymbol(".") {
                advance()
                let name = try expectIdentifier("expected a name after '.'")
                e = try make(.member(e, name), e.start, previousEnd)
            } else if current.isSymbol("(") {
                advance()
                let args = try parseList(closing: ")")
                e = try make(.call(e, args), e.start, previousEnd)
            } else if current.isSymbol("[") {
                advance()
                var lower: Expr?
                if !current.isSymbol(":") { lower = try parseExpression() }
                if current.isSymbol(":") {
                    advance()
                    var upper: Expr?
                    if !current.isSymbol("]") { upper = try parseExpression() }
                    try expectSymbol("]", "expected ']' after the slice")
                    e = try make(.slice(e, lower, upper), e.start, previousEnd)
                } else {
                    try expectSymbol("]", "expected ']' after the index")
                    e = try make(.index(e, lower!), e.start, previousEnd)
                }
            } else {
                return e
            }
        }
    }

    /// Comma-separated expressions up to the closing symbol (consumed); a trailing comma is allowed.
    private mutating func parseList(closing: String) throws(ParseAbort) -> [Expr] {
        var items: [Expr] = []
        while !current.isSymbol(closing) {
            items.append(try parseExpression())
            if current.isSymbol(",") { advance(); continue }
            guard current.isSymbol(closing) else {
                error("expected ',' or '\(closing)', found \(describe(current))", at: current.start)
                throw ParseAbort()
            }
        }
        advance()
        return items
    }

    private mutating func parsePrimary() throws(ParseAbort) -> Expr {
        let t = current
        switch t.kind {
        case .int(let v): advance(); return try make(.int(v), t.start, t.end)
        case .float(let v): advance(); return try make(.float(v), t.start, t.end)
        case .string(let s): advance(); return try make(.string(s), t.start, t.end)
        case .bytes(let b): advance(); return try make(.bytes(b), t.start, t.end)
        case .identifier(let name):
            switch name {
            case "true": advance(); return try make(.bool(true), t.start, t.end)
            case "false": advance(); return try make(.bool(false), t.start, t.end)
            case "null": advance(); return try make(.null, t.start, t.end)
            case "in", "is", "if", "let", "return", "allow", "match", "function", "service":
                error("expected an expression, found the keyword '\(name)'", at: t.start)
                throw ParseAbort()
            default: advance(); return try make(.identifier(name), t.start, t.end)
            }
        case .symbol("("):
            advance()
            let inner = try parseExpression()
            try expectSymbol(")", "expected ')' to close '('")
            // Keep the parentheses in the span so that denial messages quote the source exactly.
            return Expr(inner.kind, start: t.start, end: previousEnd)
        case .symbol("["):
            advance()
            let items = try parseList(closing: "]")
            return try make(.list(items), t.start, previousEnd)
        case .symbol("{"):
            advance()
            var entries: [(key: Expr, value: Expr)] = []
            while !current.isSymbol("}") {
                let key = try parseExpression()
                try expectSymbol(":", "expected ':' after a map key")
                let value = try parseExpression()
                entries.append((key, value))
                if current.isSymbol(",") { advance(); continue }
                guard current.isSymbol("}") else {
                    error("expected ',' or '}' in the map literal, found \(describe(current))", at: current.start)
                    throw ParseAbort()
                }
            }
            advance()
            return try make(.map(entries), t.start, previousEnd)
        case .symbol("/"):
            return try parsePathLiteral(start: t.start)
        case .invalid(let message):
            error(message, at: t.start)
            throw ParseAbort()
        default:
            error("expected an expression, found \(describe(t))", at: t.start)
            throw ParseAbort()
        }
    }

    /// `/databases/$(database)/documents/users/$(uid)`: read in path mode from the bytes after the first '/'.
    private mutating func parsePathLiteral(start: Int) throws(ParseAbort) -> Expr {
        var parts: [Expr.PathPart] = []
        var more = true
        while more {
            let segStart = lexer.position
            if lexer.rawHas("$(") {
                lexer.advance(2)
                current = lexer.next()
                let inner = try parseExpression()
                guard current.isSymbol(")") else {
                    error("expected ')' to close '$('", at: current.start)
                    throw ParseAbort()
                }
                // `current` is the ')' and the lexer sits right after it: keep reading raw bytes.
                parts.append(.interpolated(inner))
            } else if lexer.rawIs("(") {
                lexer.advance(1)
                let seg = lexer.pathLiteralSegment(allowParens: false)
                guard lexer.rawIs(")") else {
                    error("expected ')' in the path segment", at: lexer.position)
                    current = lexer.next()
                    throw ParseAbort()
                }
                lexer.advance(1)
                parts.append(.literal("(" + seg.text + ")"))
            } else {
                let seg = lexer.pathLiteralSegment(allowParens: false)
                guard !seg.text.isEmpty else {
                    error("expected a path segment or '$(' after '/'", at: segStart)
                    current = lexer.next()
                    throw ParseAbort()
                }
                parts.append(.literal(seg.text))
            }
            if lexer.rawIs("/") { lexer.advance(1) } else { more = false }
        }
        let end = lexer.position
        current = lexer.next()
        return try make(.path(parts), start, end)
    }

    // MARK: Helpers

    private var previousEndStorage = 0
    private var previousEnd: Int { previousEndStorage }

    private mutating func advance() {
        previousEndStorage = current.end
        current = lexer.next()
    }

    private var atEnd: Bool {
        if case .endOfFile = current.kind { return true }
        return false
    }

    private var tooManyErrors: Bool { diagnostics.count >= RulesLimits.maxDiagnostics }

    private mutating func make(_ kind: Expr.Kind, _ start: Int, _ end: Int) throws(ParseAbort) -> Expr {
        let e = Expr(kind, start: start, end: end)
        if e.depth > RulesLimits.maxExpressionDepth {
            error("expression is nested more than \(RulesLimits.maxExpressionDepth) deep", at: start)
            throw ParseAbort()
        }
        return e
    }

    mutating func error(_ message: String, at offset: Int) {
        guard diagnostics.count < RulesLimits.maxDiagnostics else { return }
        diagnostics.append(source.diagnostic(message, at: offset))
    }

    private mutating func expectSymbol(_ s: String, _ message: String) throws(ParseAbort) {
        guard current.isSymbol(s) else {
            if case .invalid(let m) = current.kind { error(m, at: current.start) } else {
                error("\(message), found \(describe(current))", at: current.start)
            }
            throw ParseAbort()
        }
        advance()
    }

    private mutating func expectIdentifier(_ message: String) throws(ParseAbort) -> String {
        guard case .identifier(let name) = current.kind else {
            if case .invalid(let m) = current.kind { error(m, at: current.start) } else {
                error("\(message), found \(describe(current))", at: current.start)
            }
            throw ParseAbort()
        }
        advance()
        return name
    }

    /// Skips to a point where parsing can resume: a ';' or a statement keyword at this brace level, or the
    /// '}' that closes the current block (not consumed).
    private mutating func synchronize() {
        var depth = 0
        while !atEnd {
            if current.isSymbol("{") { depth += 1 } else if current.isSymbol("}") {
                if depth == 0 { return }
                depth -= 1
            } else if depth == 0 {
                if current.isSymbol(";") { return }
                if startsStatement(current) { return }
            }
            advance()
        }
    }

    /// After a failed statement: resynchronize, and make sure at least one token was consumed so that
    /// the enclosing loop always progresses.
    private mutating func recover(from statementStart: Int) {
        synchronize()
        if current.isSymbol(";") {
            advance()
        } else if current.start == statementStart, !atEnd, !current.isSymbol("}") {
            advance()
            synchronize()
            if current.isSymbol(";") { advance() }
        }
    }

    /// After a failed top-level statement: drop a stray ';' or '}' so the loop makes progress.
    private mutating func skipStray() {
        if current.isSymbol(";") || current.isSymbol("}") { advance() }
        while !atEnd, !current.isIdentifier("service"), !current.isIdentifier("function") {
            if startsStatement(current) {
                // A statement outside any service: report once and skip it.
                error("'\(describeBare(current))' must be inside a service block", at: current.start)
                advance()
                synchronize()
                if current.isSymbol(";") || current.isSymbol("}") { advance() }
                continue
            }
            break
        }
    }

    private func describeBare(_ t: Token) -> String {
        if case .identifier(let s) = t.kind { return s }
        return describe(t)
    }

    private func describe(_ t: Token) -> String {
        switch t.kind {
        case .endOfFile: return "the end of the file"
        case .identifier(let s): return "'\(s)'"
        case .symbol(let s): return "'\(s)'"
        case .int, .float: return "number \(source.text(from: t.start, to: t.end))"
        case .string, .bytes: return "a string"
        case .invalid(let m): return m
        }
    }
}

extension Token {
    var kindMessage: String {
        if case .invalid(let m) = kind { return m }
        return "unexpected token"
    }
}

/// The type names accepted after `is`.
enum RulesTypeName {
    static let all: Set<String> = [
        "string", "int", "float", "number", "bool", "null", "list", "map", "timestamp", "duration",
        "path", "latlng", "bytes", "set", "map_diff", "constraint",
    ]
}
