/// Static checks after parsing: function declarations and calls, `allow` methods, wildcard placement for
/// the rules version, and function bodies. Reports diagnostics the same way the parser does.
struct Checker {
    let source: SourceText
    let version: Int
    private(set) var diagnostics: [Diagnostic] = []

    static let methods: Set<String> = ["read", "write", "get", "list", "create", "update", "delete"]

    init(source: SourceText, version: Int) {
        self.source = source
        self.version = version
    }

    private mutating func error(_ message: String, at offset: Int) {
        diagnostics.append(source.diagnostic(message, at: offset))
    }

    mutating func check(_ file: RulesFile) {
        for service in file.services {
            if service.name != "cloud.firestore" {
                error("unsupported service '\(service.name)'; Hearth serves 'cloud.firestore'", at: service.start)
            }
            for case .allow(let a) in service.body {
                error("'allow' must be inside a match block", at: a.start)
            }
            checkBlock(service.body, visible: [:])
        }
    }

    /// `visible` maps each function name in scope to its arity.
    private mutating func checkBlock(_ body: [Statement], visible: [String: Int]) {
        var scope = visible
        var seen: [String: Int] = [:]
        for case .function(let f) in body {
            if seen[f.name] != nil {
                error("function '\(f.name)' is already declared in this block", at: f.start)
            }
            seen[f.name] = f.parameters.count
            scope[f.name] = f.parameters.count
        }
        for statement in body {
            switch statement {
            case .function(let f): checkFunction(f, scope)
            case .allow(let a):
                for (name, start) in a.methods where !Self.methods.contains(name) {
                    error("unknown method '\(name)'; expected read, write, get, list, create, update or delete", at: start)
                }
                if let c = a.condition { checkExpr(c, scope, locals: []) }
            case .match(let m):
                checkPattern(m)
                checkBlock(m.body, visible: scope)
            }
        }
    }

    private mutating func checkPattern(_ m: MatchDecl) {
        var recursiveCount = 0
        for (i, segment) in m.pattern.enumerated() {
            guard case .recursive(let name) = segment else { continue }
            recursiveCount += 1
            let at = m.segmentStarts[i]
            if version == 1, i != m.pattern.count - 1 {
                error("recursive wildcard {\(name)=**} must be the last segment in rules_version 1", at: at)
            } else if recursiveCount > 1 {
                error("a match pattern may hold only one recursive wildcard", at: at)
            }
        }
        if version == 1, m.pattern.contains(where: { if case .recursive = $0 { return true }; return false }),
           m.body.contains(where: { if case .match = $0 { return true }; return false }) {
            if case .match(let child)? = m.body.first(where: { if case .match = $0 { return true }; return false }) {
                error("in rules_version 1 a match ending in a recursive wildcard cannot hold nested matches", at: child.start)
            }
        }
    }

    private mutating func checkFunction(_ f: FunctionDecl, _ scope: [String: Int]) {
        if f.parameters.count > RulesLimits.maxFunctionParameters {
            error("function '\(f.name)' has more than \(RulesLimits.maxFunctionParameters) parameters", at: f.start)
        }
        var seenParams = Set<String>()
        for p in f.parameters where !seenParams.insert(p).inserted {
            error("parameter '\(p)' is declared twice in function '\(f.name)'", at: f.start)
        }
        var locals = f.parameters
        var returned = false
        var lets = 0
        for statement in f.body {
            switch statement {
            case .binding(let name, let value, let start):
                if returned { error("'let' after 'return' in function '\(f.name)'", at: start) }
                lets += 1
                if lets == RulesLimits.maxLetBindings + 1 {
                    error("function '\(f.name)' has more than \(RulesLimits.maxLetBindings) let bindings", at: start)
                }
                checkExpr(value, scope, locals: locals)
                locals.append(name)
            case .result(let e, let start):
                if returned { error("function '\(f.name)' has more than one 'return'", at: start) }
                returned = true
                checkExpr(e, scope, locals: locals)
            }
        }
        if !returned, !f.hadParseErrors { error("function '\(f.name)' has no 'return'", at: f.start) }
    }

    /// Checks calls inside an expression. Recursion is bounded by the parser's depth limit.
    private mutating func checkExpr(_ e: Expr, _ scope: [String: Int], locals: [String]) {
        switch e.kind {
        case .null, .bool, .int, .float, .string, .bytes, .identifier, .invalid: break
        case .list(let items): for i in items { checkExpr(i, scope, locals: locals) }
        case .map(let entries):
            for entry in entries { checkExpr(entry.key, scope, locals: locals); checkExpr(entry.value, scope, locals: locals) }
        case .path(let parts):
            for case .interpolated(let inner) in parts { checkExpr(inner, scope, locals: locals) }
        case .unary(_, let a), .member(let a, _), .isType(let a, _): checkExpr(a, scope, locals: locals)
        case .binary(_, let a, let b), .index(let a, let b):
            checkExpr(a, scope, locals: locals); checkExpr(b, scope, locals: locals)
        case .conditional(let a, let b, let c):
            checkExpr(a, scope, locals: locals); checkExpr(b, scope, locals: locals); checkExpr(c, scope, locals: locals)
        case .slice(let a, let b, let c):
            checkExpr(a, scope, locals: locals)
            if let b { checkExpr(b, scope, locals: locals) }
            if let c { checkExpr(c, scope, locals: locals) }
        case .call(let callee, let args):
            for a in args { checkExpr(a, scope, locals: locals) }
            switch callee.kind {
            case .identifier(let name):
                if let n = scope[name] {
                    if n != args.count {
                        error("function '\(name)' takes \(n) argument\(n == 1 ? "" : "s"), but \(args.count) \(args.count == 1 ? "is" : "are") given", at: callee.start)
                    }
                } else if let n = Builtins.globals[name] {
                    if n != args.count {
                        error("'\(name)' takes \(n) argument\(n == 1 ? "" : "s"), but \(args.count) \(args.count == 1 ? "is" : "are") given", at: callee.start)
                    }
                } else {
                    error("undeclared function '\(name)'", at: callee.start)
                }
            case .member(let receiver, let method):
                if case .identifier(let ns) = receiver.kind, let functions = Builtins.namespaces[ns], !locals.contains(ns) {
                    if let n = functions[method] {
                        if n != args.count {
                            error("'\(ns).\(method)' takes \(n) argument\(n == 1 ? "" : "s"), but \(args.count) \(args.count == 1 ? "is" : "are") given", at: callee.start)
                        }
                    } else {
                        error("unknown function '\(ns).\(method)'", at: callee.start)
                    }
                } else {
                    checkExpr(receiver, scope, locals: locals)
                }
            default:
                error("only functions and methods can be called", at: callee.start)
            }
        }
    }
}
