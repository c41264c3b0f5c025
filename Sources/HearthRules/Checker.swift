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

    /// A function in scope: its arity and its declaration's offset, which names it in the call graph.
    struct Declared {
        let arity: Int
        let start: Int
    }

    /// The calls between functions, by declaration offset: the callee and where the call is written.
    private var calls: [Int: [(callee: Int, at: Int)]] = [:]
    /// Each function's name, by declaration offset.
    private var names: [Int: String] = [:]
    /// The function whose body is being checked, if any.
    private var caller: Int?
    /// The top-level functions already checked (they join every service block's scope).
    private var checkedTopLevel = Set<Int>()

    mutating func check(_ file: RulesFile) {
        let topLevel = file.functions.map(Statement.function)
        let topStarts = Set(file.functions.map(\.start))
        var seenServices: [String: Int] = [:]
        for service in file.services {
            if service.name != ServiceDecl.firestore, service.name != ServiceDecl.storage {
                error("unsupported service '\(service.name)'; Hearth serves 'cloud.firestore' and 'firebase.storage'",
                      at: service.start)
            } else if let earlier = seenServices[service.name] {
                error("service '\(service.name)' is already declared on line \(source.location(at: earlier).line)",
                      at: service.start)
            }
            seenServices[service.name] = seenServices[service.name] ?? service.start
            for case .allow(let a) in service.body {
                error("'allow' must be inside a match block", at: a.start)
            }
            // The file's top-level functions and each service block's are one scope, as in Firebase; the
            // top-level functions' own bodies are checked once.
            checkBlock(topLevel + service.body, visible: [:], topLevel: topStarts)
        }
        if file.services.isEmpty { checkBlock(topLevel, visible: [:], topLevel: topStarts) }
        checkRecursion()
    }

    /// `visible` maps each function name in scope; `topLevel` holds the offsets of the file's top-level
    /// functions among `body`'s, for the message when one clashes with a function of the service block.
    private mutating func checkBlock(_ body: [Statement], visible: [String: Declared], topLevel: Set<Int> = []) {
        var scope = visible
        var seen: [String: Int] = [:]
        var functions: [FunctionDecl] = []
        for case .function(let f) in body { functions.append(f) }
        functions.sort { $0.start < $1.start }
        for f in functions {
            names[f.start] = f.name
            if let earlier = seen[f.name] {
                switch (topLevel.contains(earlier), topLevel.contains(f.start)) {
                case (false, false):
                    error("function '\(f.name)' is already declared in this block", at: f.start)
                case (true, true):
                    // Reported with the first service block only.
                    if !checkedTopLevel.contains(f.start) { error("function '\(f.name)' is already declared at the top level of the file", at: f.start) }
                default:
                    let line = source.location(at: earlier).line
                    error("function '\(f.name)' is already declared on line \(line); the functions at the top level of the file and those of the service block share one scope", at: f.start)
                }
                continue
            }
            seen[f.name] = f.start
            scope[f.name] = Declared(arity: f.parameters.count, start: f.start)
        }
        for statement in body {
            switch statement {
            case .function(let f):
                if topLevel.contains(f.start) {
                    guard !checkedTopLevel.contains(f.start) else { continue }
                    checkedTopLevel.insert(f.start)
                }
                checkFunction(f, scope)
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

    /// Firestore's functions may call other functions but may not recurse: each cycle of calls is reported
    /// once, at the call that starts it in its first-declared function.
    private mutating func checkRecursion() {
        var reported = Set<Int>()
        for f in calls.keys.sorted() where !reported.contains(f) {
            // Breadth-first from f's calls back to f, remembering how each function was reached.
            var reachedFrom: [Int: (from: Int, at: Int)] = [:]
            var queue = [f]
            var head = 0
            var found = false
            while head < queue.count, !found {
                let current = queue[head]
                head += 1
                for edge in calls[current] ?? [] where reachedFrom[edge.callee] == nil {
                    reachedFrom[edge.callee] = (current, edge.at)
                    if edge.callee == f { found = true; break }
                    queue.append(edge.callee)
                }
            }
            guard found else { continue }
            var chain = [f]
            var step = reachedFrom[f]!.from
            while step != f {
                chain.append(step)
                step = reachedFrom[step]!.from
            }
            chain.append(f)
            chain.reverse()
            reported.formUnion(chain)
            // Where f makes the first call of the cycle.
            let at = reachedFrom[chain[1]]!.at
            let name = names[f] ?? "?"
            if chain.count == 2 {
                error("function '\(name)' calls itself; functions may not recurse", at: at)
            } else {
                let through = chain.map { names[$0] ?? "?" }.joined(separator: " -> ")
                error("function '\(name)' calls itself through other functions (\(through)); functions may not recurse", at: at)
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

    private mutating func checkFunction(_ f: FunctionDecl, _ scope: [String: Declared]) {
        caller = f.start
        defer { caller = nil }
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
                if returned, !f.hadParseErrors { error("'let' after 'return' in function '\(f.name)'", at: start) }
                lets += 1
                if lets == RulesLimits.maxLetBindings + 1 {
                    error("function '\(f.name)' has more than \(RulesLimits.maxLetBindings) let bindings", at: start)
                }
                checkExpr(value, scope, locals: locals)
                locals.append(name)
            case .result(let e, let start):
                if returned, !f.hadParseErrors { error("function '\(f.name)' has more than one 'return'", at: start) }
                returned = true
                checkExpr(e, scope, locals: locals)
            }
        }
        if !returned, !f.hadParseErrors { error("function '\(f.name)' has no 'return'", at: f.start) }
    }

    /// Checks calls inside an expression. Recursion is bounded by the parser's depth limit.
    private mutating func checkExpr(_ e: Expr, _ scope: [String: Declared], locals: [String]) {
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
                if let declared = scope[name] {
                    let n = declared.arity
                    if let caller { calls[caller, default: []].append((declared.start, callee.start)) }
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
                    } else if ns != "firestore" {
                        // `firestore.query(...)` and the like compile, as Firebase's compiler takes them, and
                        // fail when evaluated.
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
