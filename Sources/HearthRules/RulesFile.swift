/// A parsed rules file: the syntax tree the checker, printer and program are built from.
struct RulesFile: Sendable {
    /// `rules_version`: 1 (the default) or 2.
    var version: Int = 1
    /// True when the file says `rules_version = ...;`.
    var versionDeclared = false
    /// Functions declared at the top level of the file, before or after the `service` block. They share one
    /// scope with the functions declared directly in the service block.
    var functions: [FunctionDecl] = []
    /// The `service` blocks.
    var services: [ServiceDecl] = []
}

/// `service cloud.firestore { ... }` or `service firebase.storage { ... }`.
struct ServiceDecl: Sendable {
    static let firestore = "cloud.firestore"
    static let storage = "firebase.storage"

    var name: String
    var body: [Statement]
    var start: Int
}

/// A statement inside a service or match block.
enum Statement: Sendable {
    case match(MatchDecl)
    case function(FunctionDecl)
    case allow(AllowDecl)
}

/// One segment of a `match` pattern.
enum PatternSegment: Sendable, Hashable {
    /// A literal id, `users`.
    case literal(String)
    /// `{name}`: exactly one segment, bound as a string.
    case wildcard(String)
    /// `{name=**}`: several segments, bound as a path.
    case recursive(String)
}

/// `match /pattern { ... }`.
struct MatchDecl: Sendable {
    var pattern: [PatternSegment]
    /// Byte offset of each pattern segment, for diagnostics.
    var segmentStarts: [Int]
    var body: [Statement]
    var start: Int
}

/// `allow m1, m2: if condition;`.
struct AllowDecl: Sendable {
    /// The methods as written (`read`, `write`, `get`, `list`, `create`, `update`, `delete`).
    var methods: [(name: String, start: Int)]
    /// The condition; nil means always.
    var condition: Expr?
    var start: Int
}

/// One statement of a function body.
enum FunctionStatement: Sendable {
    case binding(name: String, value: Expr, start: Int)
    case result(Expr, start: Int)
}

/// `function name(params) { let ...; return ...; }`.
struct FunctionDecl: Sendable {
    var name: String
    var parameters: [String]
    var body: [FunctionStatement]
    var start: Int
    /// True when a statement of the body failed to parse (the checker then skips body-shape checks).
    var hadParseErrors = false
}
