/// Prints a syntax tree deterministically: one statement per line, two spaces per level, expressions
/// fully parenthesized so that precedence and associativity are visible (golden tests compare this text).
enum SyntaxPrinter {
    static func print(_ file: RulesFile) -> String {
        var out: [String] = []
        out.append("rules_version \(file.version)\(file.versionDeclared ? "" : " (default)")")
        block(file.functions.map(Statement.function), 0, &out)
        for service in file.services {
            out.append("service \(service.name)")
            block(service.body, 1, &out)
        }
        return out.joined(separator: "\n") + "\n"
    }

    private static func block(_ body: [Statement], _ level: Int, _ out: inout [String]) {
        let pad = String(repeating: "  ", count: level)
        for statement in body {
            switch statement {
            case .function(let f):
                out.append("\(pad)function \(f.name)(\(f.parameters.joined(separator: ", ")))")
                for s in f.body {
                    switch s {
                    case .binding(let name, let value, _): out.append("\(pad)  let \(name) = \(expr(value))")
                    case .result(let e, _): out.append("\(pad)  return \(expr(e))")
                    }
                }
            case .allow(let a):
                let methods = a.methods.map(\.name).joined(separator: ", ")
                out.append("\(pad)allow \(methods)" + (a.condition.map { ": if \(expr($0))" } ?? ""))
            case .match(let m):
                out.append("\(pad)match \(pattern(m.pattern))")
                block(m.body, level + 1, &out)
            }
        }
    }

    static func pattern(_ segments: [PatternSegment]) -> String {
        segments.map { s -> String in
            switch s {
            case .literal(let l): return "/" + l
            case .wildcard(let w): return "/{" + w + "}"
            case .recursive(let w): return "/{" + w + "=**}"
            }
        }.joined()
    }

    /// The expression as text; recursion is bounded by the parser's depth limit.
    static func expr(_ e: Expr) -> String {
        switch e.kind {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let d): return RulesValue.formatFloat(d)
        case .string(let s): return quote(s)
        case .bytes(let b): return "b\"" + b.map { "\\x" + hex2($0) }.joined() + "\""
        case .identifier(let name): return name
        case .list(let items): return "[" + items.map(expr).joined(separator: ", ") + "]"
        case .map(let entries): return "{" + entries.map { expr($0.key) + ": " + expr($0.value) }.joined(separator: ", ") + "}"
        case .path(let parts):
            return parts.map { p -> String in
                switch p {
                case .literal(let s): return "/" + s
                case .interpolated(let inner): return "/$(" + expr(inner) + ")"
                }
            }.joined()
        case .unary(let op, let a):
            let inner = expr(a)
            // `- -3`, not `--3`: keep a folded negative literal readable.
            return "(" + op.rawValue + (inner.hasPrefix("-") ? " " : "") + inner + ")"
        case .binary(let op, let a, let b): return "(" + expr(a) + " " + op.rawValue + " " + expr(b) + ")"
        case .conditional(let a, let b, let c): return "(" + expr(a) + " ? " + expr(b) + " : " + expr(c) + ")"
        case .member(let a, let name): return expr(a) + "." + name
        case .index(let a, let i): return expr(a) + "[" + expr(i) + "]"
        case .slice(let a, let lo, let hi): return expr(a) + "[" + (lo.map(expr) ?? "") + ":" + (hi.map(expr) ?? "") + "]"
        case .call(let f, let args): return expr(f) + "(" + args.map(expr).joined(separator: ", ") + ")"
        case .isType(let a, let t): return "(" + expr(a) + " is " + t + ")"
        case .invalid: return "<invalid>"
        }
    }
}
