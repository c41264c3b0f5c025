/// An expression of the rules language: its shape, where it starts and ends, and how deep it is.
struct Expr: Sendable {
    /// Unary operators.
    enum UnaryOp: String, Sendable { case not = "!", negate = "-" }

    /// Binary operators, spelled as in the source.
    enum BinaryOp: String, Sendable {
        case or = "||", and = "&&"
        case equal = "==", notEqual = "!=", less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
        case `in` = "in"
        case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"

        /// Binding strength; higher binds tighter.
        var precedence: Int {
            switch self {
            case .or: return 1
            case .and: return 2
            case .equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual, .in: return 3
            case .add, .subtract: return 4
            case .multiply, .divide, .remainder: return 5
            }
        }
    }

    /// One part of a path literal: text, or an interpolated `$(expr)`.
    enum PathPart: Sendable {
        case literal(String)
        case interpolated(Expr)
    }

    /// The expression's shape.
    indirect enum Kind: Sendable {
        case null
        case bool(Bool)
        case int(Int64)
        case float(Double)
        case string(String)
        case bytes([UInt8])
        case identifier(String)
        case list([Expr])
        case map([(key: Expr, value: Expr)])
        case path([PathPart])
        case unary(UnaryOp, Expr)
        case binary(BinaryOp, Expr, Expr)
        case conditional(Expr, Expr, Expr)
        case member(Expr, String)
        case index(Expr, Expr)
        case slice(Expr, Expr?, Expr?)
        case call(Expr, [Expr])
        case isType(Expr, String)
        /// Stands where a parse error was reported.
        case invalid
    }

    let kind: Kind
    /// Byte offset of the expression's first character.
    let start: Int
    /// Byte offset just past the expression.
    let end: Int
    /// Height of the tree below and including this node; bounded by `RulesLimits.maxExpressionDepth`.
    let depth: Int

    init(_ kind: Kind, start: Int, end: Int) {
        self.kind = kind
        self.start = start
        self.end = end
        var d = 0
        switch kind {
        case .null, .bool, .int, .float, .string, .bytes, .identifier, .invalid: d = 0
        case .list(let items): d = items.reduce(0) { max($0, $1.depth) }
        case .map(let entries): d = entries.reduce(0) { max($0, $1.key.depth, $1.value.depth) }
        case .path(let parts):
            for case .interpolated(let e) in parts { d = max(d, e.depth) }
        case .unary(_, let e), .member(let e, _), .isType(let e, _): d = e.depth
        case .binary(_, let a, let b), .index(let a, let b): d = max(a.depth, b.depth)
        case .conditional(let a, let b, let c): d = max(a.depth, b.depth, c.depth)
        case .slice(let a, let b, let c): d = max(a.depth, b?.depth ?? 0, c?.depth ?? 0)
        case .call(let f, let args): d = args.reduce(f.depth) { max($0, $1.depth) }
        }
        self.depth = d + 1
    }
}
