import HearthCore

/// A compiled rules file: immutable and `Sendable`, compiled once and evaluated for many requests. A class,
/// so that each request holds it with one reference instead of copying its parts.
public final class RulesProgram: Sendable {
    /// A function declaration. Classes (as `Match` and `Allow`): a call or a step of the path walk then holds
    /// one reference instead of copying every part.
    final class Function: Sendable {
        let name: String
        let parameters: [String]
        let bindings: [(name: String, value: Expr)]
        let result: Expr
        /// Functions visible from the body: those of the declaring block and its ancestors.
        let scope: FunctionScope

        init(name: String, parameters: [String], bindings: [(name: String, value: Expr)], result: Expr,
             scope: FunctionScope) {
            self.name = name
            self.parameters = parameters
            self.bindings = bindings
            self.result = result
            self.scope = scope
        }
    }

    /// A set of methods in one word (a `Set` would put a hash table between every request and its rules).
    struct Methods: OptionSet, Sendable {
        let rawValue: UInt8

        init(rawValue: UInt8) { self.rawValue = rawValue }

        init(_ method: RulesMethod) {
            switch method {
            case .get: rawValue = 1
            case .list: rawValue = 2
            case .create: rawValue = 4
            case .update: rawValue = 8
            case .delete: rawValue = 16
            }
        }
    }

    /// A class so that collecting the candidates for a request copies one reference.
    final class Allow: Sendable {
        let methods: Methods
        let condition: Expr?
        /// `file:line:column` of the `allow`.
        let location: String
        /// The condition as written, or `true` when there is none.
        let text: String

        init(methods: Methods, condition: Expr?, location: String, text: String) {
            self.methods = methods
            self.condition = condition
            self.location = location
            self.text = text
        }
    }

    final class Match: Sendable {
        let pattern: [PatternSegment]
        let allows: [Allow]
        let children: [Match]
        let scope: FunctionScope
        /// True when the pattern has a `{name=**}` segment, which can match a path in several ways.
        let hasRecursiveWildcard: Bool

        init(pattern: [PatternSegment], allows: [Allow], children: [Match], scope: FunctionScope,
             hasRecursiveWildcard: Bool) {
            self.pattern = pattern
            self.allows = allows
            self.children = children
            self.scope = scope
            self.hasRecursiveWildcard = hasRecursiveWildcard
        }
    }

    /// The rules language version, 1 or 2.
    public let version: Int
    /// The `match` blocks of `service cloud.firestore`.
    let roots: [Match]
    /// The `match` blocks of `service firebase.storage`.
    let storageRoots: [Match]
    /// Whether the file has a `service cloud.firestore` block.
    public let servesFirestore: Bool
    /// Whether the file has a `service firebase.storage` block: without one, only the admin key touches files.
    public let servesStorage: Bool
    let functions: [Function]
    let file: RulesFile
    let source: SourceText
    /// Decisions of reads, reused while nothing they depend on changes (`evaluateRead`).
    let readDecisions = ReadDecisions()

    private init(version: Int, roots: [Match], storageRoots: [Match], functions: [Function], file: RulesFile,
                 source: SourceText) {
        self.version = version
        self.roots = roots
        self.storageRoots = storageRoots
        servesFirestore = file.services.contains { $0.name == ServiceDecl.firestore }
        servesStorage = file.services.contains { $0.name == ServiceDecl.storage }
        self.functions = functions
        self.file = file
        self.source = source
    }

    /// Parses, checks and compiles a rules file; throws every diagnostic found when it does not compile.
    public static func compile(source: String, fileName: String) throws(RulesCompileError) -> RulesProgram {
        let text = SourceText(fileName: fileName, text: source)
        guard text.bytes.count <= RulesLimits.maxSourceBytes else {
            throw RulesCompileError(diagnostics: [text.diagnostic(
                "rules file is \(text.bytes.count) bytes; the limit is \(RulesLimits.maxSourceBytes)", at: 0)])
        }
        var parser = Parser(source: text)
        let file = parser.parseFile()
        var diagnostics = parser.diagnostics
        var checker = Checker(source: text, version: file.version)
        checker.check(file)
        diagnostics += checker.diagnostics
        if !diagnostics.isEmpty {
            diagnostics.sort { ($0.location.offset, $0.message) < ($1.location.offset, $1.message) }
            throw RulesCompileError(diagnostics: Array(diagnostics.prefix(RulesLimits.maxDiagnostics)))
        }
        var builder = Builder(source: text)
        var roots: [Match] = []
        var storageRoots: [Match] = []
        // The file's top-level functions join each service block's, as the checker scoped them.
        let topLevel = file.functions.map(Statement.function)
        for service in file.services {
            let built = builder.buildBlock(topLevel + service.body, parentScope: FunctionScope())
            if service.name == ServiceDecl.storage { storageRoots += built } else { roots += built }
        }
        return RulesProgram(version: file.version, roots: roots, storageRoots: storageRoots, functions: builder.functions,
                            file: file, source: text)
    }

    /// The syntax tree printed deterministically, one node per line (for golden tests and `rules check`).
    public var printedSyntax: String { SyntaxPrinter.print(file) }

    /// Turns the syntax tree into matches and functions with resolved scopes.
    private struct Builder {
        let source: SourceText
        var functions: [Function] = []

        mutating func buildBlock(_ body: [Statement], parentScope: FunctionScope) -> [Match] {
            let scope = declare(body, parentScope)
            var matches: [Match] = []
            for case .match(let m) in body { matches.append(buildMatch(m, scope)) }
            return matches
        }

        /// Adds the block's functions; every function sees all of its block's functions (declaration order
        /// does not matter) and those of enclosing blocks.
        private mutating func declare(_ body: [Statement], _ parentScope: FunctionScope) -> FunctionScope {
            var scope = parentScope
            var declared: [(FunctionDecl, Int)] = []
            for case .function(let f) in body {
                let index = functions.count + declared.count
                scope.declare(f.name, index)
                declared.append((f, index))
            }
            for (f, _) in declared {
                var bindings: [(name: String, value: Expr)] = []
                var result = Expr(.invalid, start: f.start, end: f.start)
                for statement in f.body {
                    switch statement {
                    case .binding(let name, let value, _): bindings.append((name, value))
                    case .result(let e, _): result = e
                    }
                }
                functions.append(Function(name: f.name, parameters: f.parameters, bindings: bindings, result: result, scope: scope))
            }
            return scope
        }

        private mutating func buildMatch(_ m: MatchDecl, _ parentScope: FunctionScope) -> Match {
            let scope = declare(m.body, parentScope)
            var allows: [Allow] = []
            var children: [Match] = []
            for statement in m.body {
                switch statement {
                case .allow(let a):
                    var methods: Methods = []
                    for (name, _) in a.methods {
                        switch name {
                        case "read": methods.formUnion([Methods(.get), Methods(.list)])
                        case "write": methods.formUnion([Methods(.create), Methods(.update), Methods(.delete)])
                        default: if let m = RulesMethod(rawValue: name) { methods.insert(Methods(m)) }
                        }
                    }
                    let loc = source.location(at: a.start)
                    let text = a.condition.map { source.text(from: $0.start, to: $0.end) } ?? "true"
                    // `if true` needs no evaluation: such an allow is as unconditional as one without `if`.
                    var condition = a.condition
                    if case .bool(true)? = condition?.kind { condition = nil }
                    allows.append(Allow(methods: methods, condition: condition,
                                        location: "\(source.fileName):\(loc.line):\(loc.column)", text: text))
                case .match(let child):
                    children.append(buildMatch(child, scope))
                case .function:
                    break
                }
            }
            let recursive = m.pattern.contains { if case .recursive = $0 { return true } else { return false } }
            return Match(pattern: m.pattern, allows: allows, children: children, scope: scope,
                         hasRecursiveWildcard: recursive)
        }
    }
}

/// The functions visible at one place in a rules file: those of its block and of the enclosing blocks, an inner
/// declaration hiding an outer one of the same name. Most places see a few functions: comparing a call's name
/// with a few short names costs less than hashing it, so a short scope is a list searched from the innermost
/// end, and only a long one is hashed.
struct FunctionScope: Sendable {
    /// Scopes with more functions than this are looked up by hash.
    static let listed = 8

    /// The functions in declaration order, while there are few; empty once they are hashed.
    private var entries: [(name: String, index: Int)] = []
    private var hashed: [String: Int]?

    /// The index in `RulesProgram.functions` of the function `name` names here, or nil.
    subscript(name: String) -> Int? {
        if let hashed { return hashed[name] }
        for entry in entries.reversed() where entry.name == name { return entry.index }
        return nil
    }

    /// Makes `name` name the function at `index`, hiding any earlier function of that name.
    mutating func declare(_ name: String, _ index: Int) {
        if hashed != nil {
            hashed![name] = index
            return
        }
        entries.append((name, index))
        if entries.count > Self.listed {
            hashed = Dictionary(entries.map { ($0.name, $0.index) }, uniquingKeysWith: { _, inner in inner })
            entries = []
        }
    }
}
