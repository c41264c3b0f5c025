import HearthCore

/// Why an expression did not produce a value. Fatal errors (the expression budget) end the whole
/// request; the others only make the enclosing `allow` false unless `&&`/`||` short-circuits past them.
struct EvalError: Error, Sendable {
    let message: String
    var fatal = false

    init(_ message: String, fatal: Bool = false) {
        self.message = message
        self.fatal = fatal
    }
}

/// The distinct documents read by `get`/`exists` (and their `After` forms) for one request or one batch:
/// cached reads do not count again, as in Firestore.
final class AccessState {
    struct Key: Equatable {
        let after: Bool
        let segments: ArraySlice<String>

        /// Segments compared by their UTF-8 bytes, as documents are told apart.
        static func == (a: Key, b: Key) -> Bool {
            a.after == b.after && sameSegments(a.segments, b.segments)
        }
    }

    /// The documents read so far; at most `limit` of them, so a list is quicker than hashing paths. Most
    /// requests read one, kept apart so that it needs no array.
    private var first: (key: Key, document: Document?)?
    private var others: [(key: Key, document: Document?)] = []
    var count = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func cached(_ key: Key) -> Document?? {
        guard let first else { return nil }
        if first.key == key { return .some(first.document) }
        for entry in others where entry.key == key { return .some(entry.document) }
        return nil
    }

    func remember(_ key: Key, _ document: Document?) {
        if first == nil { first = (key, document) } else { others.append((key, document)) }
    }

    /// Every document read so far, in the order first read.
    var documents: [(key: Key, document: Document?)] {
        guard let first else { return [] }
        return [first] + others
    }
}

/// Where evaluation is: the local variables in scope (a function's parameters and `let`s, kept in the
/// evaluator's `locals` from `base` for `count` entries) and the functions visible from here. The wildcards,
/// `request` and `resource` are the evaluator's, seen from every frame.
struct Frame {
    var functions: FunctionScope
    var base = 0
    var count = 0

    init(functions: FunctionScope) {
        self.functions = functions
    }
}

/// A local variable: a parameter's value, or a `let` evaluated when first read (as Firestore does, so that a
/// binding that fails matters only where the result depends on it), then remembered.
enum Local {
    case value(RulesValue)
    case pending(Expr)
    case failed(EvalError)
}

/// Evaluates conditions for one request. Not shared across threads: every request makes its own.
final class Evaluator {
    let program: RulesProgram
    let lookup: any RulesDocumentLookup
    /// The reads shared by a batch's requests; a single request makes its own when a rule first reads.
    private let sharedAccess: AccessState?
    private lazy var accessState = sharedAccess ?? AccessState(limit: request.accessCallLimit)
    /// The wildcard bindings of the `allow` being evaluated, outermost match first: function bodies see them too.
    var bindings: [(name: String, value: RulesValue)] = []
    /// `resource` for the `allow`s being evaluated, or nil to make it from the request when first read.
    var resource: RulesValue?
    /// The request decided, for `request` and `resource`.
    private let request: RulesRequest
    /// `request`, made when a rule first reads it.
    private var requestValue: RulesValue?
    private var lazyRequest: LazyRequest?
    /// Whether a `get`/`exists` has read a document (or tried to) in this evaluator's own access state.
    private(set) var readDocuments = false
    /// Whether a document read for `get`/`exists` failed: the decision then says nothing about the inputs.
    private(set) var lookupFailed = false
    var expressionsEvaluated = 0
    var callDepth = 0
    var regexBudget = RulesLimits.maxRegexSteps
    var regexCache: [String: Regex] = [:]
    /// The locals of every call in progress, innermost last: one array for the whole request, so that a call
    /// adds its parameters and bindings without allocating.
    private var locals: [(name: String, slot: Local)] = []

    /// The storage request decided, when the rules are `service firebase.storage`'s: `request` and `resource`
    /// are then the object's, and documents are read with `firestore.get()`/`firestore.exists()`.
    let storage: StorageRulesRequest?

    init(program: RulesProgram, request: RulesRequest, lookup: any RulesDocumentLookup, access: AccessState?) {
        self.program = program
        self.request = request
        self.lookup = lookup
        self.sharedAccess = access
        self.storage = nil
    }

    /// An evaluator for a storage request.
    init(program: RulesProgram, storage: StorageRulesRequest, lookup: any RulesDocumentLookup) {
        self.program = program
        // The document request's slots a storage request shares: its caller, time and document-read limit.
        self.request = RulesRequest(method: storage.method, path: DocumentPath(uncheckedSegments: ["b", storage.bucket]),
                                    auth: storage.auth, time: storage.time)
        self.lookup = lookup
        self.sharedAccess = nil
        self.storage = storage
    }

    /// Whether the rules read `request.time`, the one input of a decision that is not the request's path,
    /// caller, method or the documents it reads.
    var readClock: Bool { lazyRequest?.timeRead ?? false }

    /// The documents `get`/`exists` (and their `After` forms) read, or nil when the evaluator shares a
    /// batch's access state.
    var documentsRead: [(key: AccessState.Key, document: Document?)]? {
        guard sharedAccess == nil else { return nil }
        return readDocuments ? accessState.documents : []
    }

    /// The value of a variable: a local of `frame`, else a wildcard, else `request` or `resource`. Reading a
    /// `let` for the first time evaluates it, and throws if it fails.
    func variable(_ name: String, _ frame: Frame) throws(EvalError) -> RulesValue? {
        var i = frame.base + frame.count
        while i > frame.base {
            i -= 1
            guard locals[i].name == name else { continue }
            let slot = locals[i].slot
            switch slot {
            case .value(let v): return v
            case .failed(let error): throw error
            case .pending(let e):
                // A binding sees the parameters and the bindings before it.
                var inner = frame
                inner.count = i - frame.base
                do {
                    let v = try evalLazily(e, inner)
                    locals[i].slot = .value(v)
                    return v
                } catch {
                    if !error.fatal { locals[i].slot = .failed(error) }
                    throw error
                }
            }
        }
        return global(name)
    }

    /// Whether `name` names a variable in `frame` (a local, a wildcard, `request` or `resource`), without
    /// evaluating it.
    func isVariable(_ name: String, _ frame: Frame) -> Bool {
        for i in frame.base..<(frame.base + frame.count) where locals[i].name == name { return true }
        for v in bindings where v.name == name { return true }
        return name == "request" || name == "resource"
    }

    /// A wildcard, `request` or `resource`.
    private func global(_ name: String) -> RulesValue? {
        for v in bindings.reversed() where v.name == name { return v.value }
        switch name {
        case "request":
            if let requestValue { return requestValue }
            if let storage {
                let value = RulesValue.lazy(LazyStorageRequest(storage))
                requestValue = value
                return value
            }
            let made = LazyRequest(request)
            let value = RulesValue.lazy(made)
            lazyRequest = made
            requestValue = value
            return value
        case "resource":
            if let resource { return resource }
            if let storage {
                let value: RulesValue = storage.resource.map { .lazy(LazyStorageObject($0)) } ?? .null
                resource = value
                return value
            }
            let value: RulesValue = request.resource.map { .lazy(LazyResource($0)) }
                ?? request.storedResource.map { .lazy(LazyStoredResource($0)) } ?? .null
            resource = value
            return value
        default:
            return nil
        }
    }

    /// Evaluates an expression to a value with no lazy map at its top, as every operator and built-in expects.
    func eval(_ e: Expr, _ frame: Frame) throws(EvalError) -> RulesValue {
        try evalLazily(e, frame).materialized
    }

    /// Evaluates an expression; the value may be a lazy map, for the places that read a map by key
    /// (member, index, `in`, map methods), test its type, compare it, or pass it on unread (variables,
    /// arguments and results of functions).
    func evalLazily(_ e: Expr, _ frame: Frame) throws(EvalError) -> RulesValue {
        expressionsEvaluated += 1
        if expressionsEvaluated > RulesLimits.maxExpressionsEvaluated {
            throw EvalError("more than \(RulesLimits.maxExpressionsEvaluated) expressions evaluated", fatal: true)
        }
        switch e.kind {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let d): return .float(d)
        case .string(let s): return .string(s)
        case .bytes(let b): return .bytes(b)
        case .invalid: throw EvalError("invalid expression")
        case .identifier(let name):
            if let v = try variable(name, frame) { return v }
            throw EvalError("unknown variable '\(name)'")
        case .list(let items):
            // An unknown element makes the whole list unknown: for some documents that element fails, and
            // then so does the list (a query is decided soundly only if `unknown` also stands for failing).
            var out: [RulesValue] = []
            out.reserveCapacity(items.count)
            var unknown = false
            for item in items {
                let v = try eval(item, frame)
                if v.isUnknown { unknown = true }
                out.append(v)
            }
            return unknown ? .unknown : .list(out)
        case .map(let entries):
            var out: [String: RulesValue] = [:]
            var unknown = false
            for entry in entries {
                let key = try eval(entry.key, frame)
                if key.isUnknown { unknown = true; continue }
                guard case .string(let k) = key else { throw EvalError("map keys must be strings, not \(key.typeName)") }
                let v = try eval(entry.value, frame)
                if v.isUnknown { unknown = true }
                out[k] = v
            }
            return unknown ? .unknown : .map(out)
        case .path(let parts):
            var segments: [String] = []
            segments.reserveCapacity(parts.count + 2)
            var unknown = false
            for part in parts {
                switch part {
                case .literal(let s): segments.append(s)
                case .interpolated(let inner):
                    switch try eval(inner, frame) {
                    case .string(let s):
                        // One segment, slashes and all, as a bound path variable is: a string cannot add
                        // segments (or vanish) and so name another document than the one it spells.
                        segments.append(s)
                    case .path(let p): segments += p
                    case .int(let i): segments.append(String(i))
                    case .unknown: unknown = true
                    case let v: throw EvalError("cannot interpolate a \(v.typeName) into a path")
                    }
                }
            }
            return unknown ? .unknown : .path(segments)
        case .unary(let op, let operand):
            let v = try eval(operand, frame)
            switch (op, v) {
            case (_, .unknown): return .unknown
            case (.not, .bool(let b)): return .bool(!b)
            case (.negate, .int(let i)):
                guard i != Int64.min else { throw EvalError("integer overflow") }
                return .int(-i)
            case (.negate, .float(let d)): return .float(-d)
            case (.negate, .duration(let d)): return .duration(d.negated)
            default: throw EvalError("operator \(op.rawValue) does not apply to \(v.typeName)")
            }
        case .binary(.and, let l, let r): return try logical(l, r, frame, isAnd: true)
        case .binary(.or, let l, let r): return try logical(l, r, frame, isAnd: false)
        case .binary(let op, let l, let r):
            // Equality and `in` take lazy maps: `resource != null` or `'k' in resource.data` need no conversion.
            let lazyLeft = op == .equal || op == .notEqual
            let lazyRight = lazyLeft || op == .in
            let a = lazyLeft ? try evalLazily(l, frame) : try eval(l, frame)
            let b = lazyRight ? try evalLazily(r, frame) : try eval(r, frame)
            return try binary(op, a, b)
        case .conditional(let c, let t, let f):
            switch try eval(c, frame) {
            case .bool(true): return try evalLazily(t, frame)
            case .bool(false): return try evalLazily(f, frame)
            case .unknown:
                // Unknown even when both branches agree: for some documents the condition may fail instead
                // (a field the query does not pin may be missing), and then so does the whole expression.
                return .unknown
            case let v: throw EvalError("condition of ?: is \(v.typeName), not bool")
            }
        case .member(let base, let name):
            return try member(try evalLazily(base, frame), name)
        case .index(let base, let index):
            return try self.index(try evalLazily(base, frame), try eval(index, frame))
        case .slice(let base, let lo, let hi):
            let b = try eval(base, frame)
            let l = try lo.map { e throws(EvalError) in try eval(e, frame) }
            let h = try hi.map { e throws(EvalError) in try eval(e, frame) }
            return try slice(b, l, h)
        case .isType(let operand, let type):
            let v = try evalLazily(operand, frame)
            return Evaluator.isType(v, type)
        case .call(let callee, let args):
            return try call(callee, args, frame)
        }
    }

    /// `&&` and `||` with Firestore's error rules and three-valued logic for unknowns:
    /// `false && x` is false and `true || x` is true even when `x` fails or is unknown (in either order).
    private func logical(_ l: Expr, _ r: Expr, _ frame: Frame, isAnd: Bool) throws(EvalError) -> RulesValue {
        let decisive = !isAnd
        var leftError: EvalError?
        var leftUnknown = false
        do {
            switch try eval(l, frame) {
            case .bool(let b):
                if b == decisive { return .bool(decisive) }
            case .unknown: leftUnknown = true
            case let v: leftError = EvalError("operand of \(isAnd ? "&&" : "||") is \(v.typeName), not bool")
            }
        } catch {
            if error.fatal { throw error }
            leftError = error
        }
        let right: RulesValue
        do {
            right = try eval(r, frame)
        } catch {
            if error.fatal { throw error }
            throw leftError ?? error
        }
        switch right {
        case .bool(let b):
            if b == decisive { return .bool(decisive) }
            if let leftError { throw leftError }
            return leftUnknown ? .unknown : .bool(b)
        case .unknown:
            if let leftError { throw leftError }
            return .unknown
        default:
            throw leftError ?? EvalError("operand of \(isAnd ? "&&" : "||") is \(right.typeName), not bool")
        }
    }

    // MARK: Operators

    func binary(_ op: Expr.BinaryOp, _ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        if op == .in { return try contains(b, a) }
        if case .unknown = a { return .unknown }
        if case .unknown = b { return .unknown }
        switch op {
        case .equal:
            guard let eq = RulesValue.equal(a, b) else { return .unknown }
            return .bool(eq)
        case .notEqual:
            guard let eq = RulesValue.equal(a, b) else { return .unknown }
            return .bool(!eq)
        case .less, .lessEqual, .greater, .greaterEqual:
            let c = try compare(a, b)
            guard let c else { return .bool(false) }
            switch op {
            case .less: return .bool(c < 0)
            case .lessEqual: return .bool(c <= 0)
            case .greater: return .bool(c > 0)
            default: return .bool(c >= 0)
            }
        case .add: return try add(a, b)
        case .subtract: return try subtract(a, b)
        case .multiply, .divide, .remainder: return try arithmetic(op, a, b)
        case .and, .or, .in: throw EvalError("unreachable operator")
        }
    }

    /// -1, 0, 1; nil when a NaN makes the values unordered.
    private func compare(_ a: RulesValue, _ b: RulesValue) throws(EvalError) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.float(let x), .float(let y)):
            if x.isNaN || y.isNaN { return nil }
            return x == y ? 0 : (x < y ? -1 : 1)
        case (.int(let x), .float(let y)):
            if y.isNaN { return nil }
            return Value.compareIntDouble(x, y)
        case (.float(let x), .int(let y)):
            if x.isNaN { return nil }
            return -Value.compareIntDouble(y, x)
        case (.string(let x), .string(let y)): return compareUTF8(x, y)
        case (.timestamp(let x), .timestamp(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.duration(let x), .duration(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.bytes(let x), .bytes(let y)): return Value.compare(.bytes(x), .bytes(y))
        default: throw EvalError("cannot compare \(a.typeName) with \(b.typeName)")
        }
    }

    /// `needle in haystack`.
    private func contains(_ haystack: RulesValue, _ needle: RulesValue) throws(EvalError) -> RulesValue {
        switch haystack {
        case .unknown: return .unknown
        case .list(let items):
            var unknown = needle.isUnknown
            for item in items {
                switch RulesValue.equal(item, needle) {
                case true?: return .bool(true)
                case nil: unknown = true
                default: break
                }
            }
            return unknown ? .unknown : .bool(false)
        case .set(let s):
            if needle.isUnknown { return .unknown }
            return .bool(s.contains(needle))
        case .map(let m):
            if needle.isUnknown { return .unknown }
            guard case .string(let k) = needle else { throw EvalError("map keys are strings, not \(needle.typeName)") }
            return .bool(m[k] != nil)
        case .lazy(let m):
            if needle.isUnknown { return .unknown }
            guard case .string(let k) = needle else { throw EvalError("map keys are strings, not \(needle.typeName)") }
            return .bool(m.contains(k))
        case .partialMap(let m):
            guard case .string(let k) = needle, m[k] != nil else { return .unknown }
            return .bool(true)
        default:
            throw EvalError("'in' needs a list, set or map on the right, not \(haystack.typeName)")
        }
    }

    /// An int result, or the error Firebase's rules give when it overflows.
    private func checked(_ result: (partialValue: Int64, overflow: Bool)) throws(EvalError) -> RulesValue {
        if result.overflow { throw EvalError("integer overflow") }
        return .int(result.partialValue)
    }

    private func add(_ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch (a, b) {
        case (.int(let x), .int(let y)): return try checked(x.addingReportingOverflow(y))
        case (.int, .float), (.float, .int), (.float, .float): return .float(try double(a) + double(b))
        case (.string(let x), .string(let y)):
            guard x.utf8.count + y.utf8.count <= RulesLimits.maxStringBytes else { throw EvalError("string too long") }
            return .string(x + y)
        case (.list(let x), .list(let y)):
            guard x.count + y.count <= RulesLimits.maxCollectionSize else { throw EvalError("list too long") }
            return .list(x + y)
        case (.timestamp(let t), .duration(let d)), (.duration(let d), .timestamp(let t)):
            guard let r = t.adding(d) else { throw EvalError("timestamp out of range") }
            return .timestamp(r)
        case (.duration(let x), .duration(let y)):
            guard let r = x.adding(y) else { throw EvalError("duration out of range") }
            return .duration(r)
        default: throw EvalError("cannot add \(a.typeName) and \(b.typeName)")
        }
    }

    private func subtract(_ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch (a, b) {
        case (.int(let x), .int(let y)): return try checked(x.subtractingReportingOverflow(y))
        case (.int, .float), (.float, .int), (.float, .float): return .float(try double(a) - double(b))
        case (.timestamp(let t), .duration(let d)):
            guard let r = t.adding(d.negated) else { throw EvalError("timestamp out of range") }
            return .timestamp(r)
        case (.timestamp(let x), .timestamp(let y)):
            guard let r = x.subtracting(y) else { throw EvalError("duration out of range") }
            return .duration(r)
        case (.duration(let x), .duration(let y)):
            guard let r = x.adding(y.negated) else { throw EvalError("duration out of range") }
            return .duration(r)
        default: throw EvalError("cannot subtract \(b.typeName) from \(a.typeName)")
        }
    }

    private func arithmetic(_ op: Expr.BinaryOp, _ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        if case .int(let x) = a, case .int(let y) = b {
            switch op {
            case .multiply: return try checked(x.multipliedReportingOverflow(by: y))
            case .divide:
                if y == 0 { throw EvalError("division by zero") }
                if x == Int64.min, y == -1 { throw EvalError("integer overflow") }
                return .int(x / y)
            default:
                if y == 0 { throw EvalError("modulus by zero") }
                if x == Int64.min, y == -1 { return .int(0) }
                return .int(x % y)
            }
        }
        let x = try double(a), y = try double(b)
        switch op {
        case .multiply: return .float(x * y)
        case .divide: return .float(x / y)
        default: return .float(x.truncatingRemainder(dividingBy: y))
        }
    }

    func double(_ v: RulesValue) throws(EvalError) -> Double {
        switch v {
        case .int(let i): return Double(i)
        case .float(let d): return d
        default: throw EvalError("expected a number, got \(v.typeName)")
        }
    }

    // MARK: Access

    func member(_ base: RulesValue, _ name: String) throws(EvalError) -> RulesValue {
        switch base {
        case .map(let m):
            guard let v = m[name] else { throw EvalError("property '\(name)' is undefined on the map") }
            return v
        case .lazy(let m):
            guard let v = m[name] else { throw EvalError("property '\(name)' is undefined on the map") }
            return v
        case .partialMap(let m): return m[name] ?? .unknown
        case .unknown: return .unknown
        case .null: throw EvalError("null value has no property '\(name)'")
        default: throw EvalError("\(base.typeName) has no property '\(name)'")
        }
    }

    private func intIndex(_ v: RulesValue, count: Int) throws(EvalError) -> Int {
        guard case .int(let i) = v else { throw EvalError("index must be an int, not \(v.typeName)") }
        guard i >= 0, i < Int64(count) else { throw EvalError("index \(i) out of range") }
        return Int(i)
    }

    func index(_ base: RulesValue, _ idx: RulesValue) throws(EvalError) -> RulesValue {
        if idx.isUnknown { return .unknown }
        switch base {
        case .unknown: return .unknown
        case .list(let items): return items[try intIndex(idx, count: items.count)]
        case .path(let p): return .string(p[try intIndex(idx, count: p.count)])
        case .string(let s):
            let scalars = Array(s.unicodeScalars)
            return .string(String(Character(scalars[try intIndex(idx, count: scalars.count)])))
        case .map, .partialMap, .lazy:
            guard case .string(let k) = idx else { throw EvalError("map keys are strings, not \(idx.typeName)") }
            return try member(base, k)
        default: throw EvalError("cannot index a \(base.typeName)")
        }
    }

    private func slice(_ base: RulesValue, _ lo: RulesValue?, _ hi: RulesValue?) throws(EvalError) -> RulesValue {
        if base.isUnknown || lo?.isUnknown == true || hi?.isUnknown == true { return .unknown }
        func bounds(_ count: Int) throws(EvalError) -> Range<Int> {
            var l = 0, h = count
            if let lo {
                guard case .int(let i) = lo else { throw EvalError("slice bound must be an int") }
                l = Int(clamping: i)
            }
            if let hi {
                guard case .int(let i) = hi else { throw EvalError("slice bound must be an int") }
                h = Int(clamping: i)
            }
            guard l >= 0, h <= count, l <= h else { throw EvalError("slice [\(l):\(h)] out of range") }
            return l..<h
        }
        switch base {
        case .list(let items): return .list(Array(items[try bounds(items.count)]))
        case .string(let s):
            let scalars = Array(s.unicodeScalars)
            var out = String.UnicodeScalarView()
            out.append(contentsOf: scalars[try bounds(scalars.count)])
            return .string(String(out))
        case .path(let p): return .path(Array(p[try bounds(p.count)]))
        default: throw EvalError("cannot slice a \(base.typeName)")
        }
    }

    static func isType(_ v: RulesValue, _ type: String) -> RulesValue {
        switch (v, type) {
        case (.unknown, _): return .unknown
        case (.int, "number"), (.float, "number"): return .bool(true)
        case (.partialMap, "map"): return .bool(true)
        case (.latlng, "latlng"), (.mapDiff, "map_diff"): return .bool(true)
        default: return .bool(v.typeName == type)
        }
    }

    // MARK: Calls

    private func call(_ callee: Expr, _ argExprs: [Expr], _ frame: Frame) throws(EvalError) -> RulesValue {
        switch callee.kind {
        case .identifier(let name):
            var args: [RulesValue] = []
            args.reserveCapacity(argExprs.count)
            if let index = frame.functions[name] {
                // Arguments stay lazy: a function reading one field of `request.resource.data` converts one field.
                for a in argExprs { args.append(try evalLazily(a, frame)) }
                return try callFunction(index, args)
            }
            if argExprs.count == 1, let after = Self.readsAfterWrites(name) {
                if storage != nil {
                    throw EvalError("\(name)() is not available in storage rules; use firestore.get() or firestore.exists()")
                }
                // The document reads, without an argument list.
                let path = try eval(argExprs[0], frame)
                if path.isUnknown { return .unknown }
                let doc = try access(path, after: after)
                if name.utf8.first == UInt8(ascii: "g") { return doc.map { .lazy(LazyResource($0)) } ?? .null }
                return .bool(doc != nil)
            }
            for a in argExprs { args.append(try eval(a, frame)) }
            return try callGlobal(name, args)
        case .member(let receiver, let method):
            if case .identifier(let ns) = receiver.kind, Builtins.namespaces[ns] != nil, !isVariable(ns, frame) {
                var args: [RulesValue] = []
                for a in argExprs { args.append(try eval(a, frame)) }
                return try callNamespace(ns, method, args)
            }
            let target = try evalLazily(receiver, frame)
            var args: [RulesValue] = []
            for a in argExprs { args.append(try eval(a, frame)) }
            return try callMethod(target, method, args)
        default:
            throw EvalError("expression is not callable")
        }
    }

    private func callFunction(_ index: Int, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        let f = program.functions[index]
        guard args.count == f.parameters.count else {
            throw EvalError("function \(f.name) takes \(f.parameters.count) arguments, got \(args.count)")
        }
        guard callDepth < RulesLimits.maxCallDepth else {
            throw EvalError("function calls nested more than \(RulesLimits.maxCallDepth) deep")
        }
        callDepth += 1
        defer { callDepth -= 1 }
        var frame = Frame(functions: f.scope)
        frame.base = locals.count
        frame.count = f.parameters.count + f.bindings.count
        // Only a call that added locals touches the array: removing none could still copy the empty one.
        defer { if locals.count > frame.base { locals.removeSubrange(frame.base...) } }
        // An unknown argument stands for a value that fails for some documents, and with it the whole call:
        // the result is then unknown too, whatever the body makes of it. A `let` is evaluated where it is read,
        // as if written there, so an unknown one carries through the operators like any other expression.
        let unknown = args.contains(where: \.isUnknown)
        for (p, v) in zip(f.parameters, args) { locals.append((p, .value(v))) }
        for binding in f.bindings { locals.append((binding.name, .pending(binding.value))) }
        let result = try evalLazily(f.result, frame)
        return unknown ? .unknown : result
    }

    // MARK: Document access

    /// For `get`, `exists`, `getAfter` and `existsAfter`, whether it reads the state after the pending writes;
    /// nil for any other name. (Comparing short names costs less than hashing them.)
    static func readsAfterWrites(_ name: String) -> Bool? {
        switch name {
        case "get", "exists": return false
        case "getAfter", "existsAfter": return true
        default: return nil
        }
    }

    /// `get`, `exists`, `getAfter`, `existsAfter`.
    func access(_ path: RulesValue, after: Bool) throws(EvalError) -> Document? {
        guard case .path(let segments) = path else {
            throw EvalError("expected a path, got \(path.typeName)")
        }
        let prefix = RulesValue.documentsPrefix
        guard segments.count > prefix.count, segments[0] == "databases", segments[2] == "documents",
              (segments.count - prefix.count) % 2 == 0 else {
            throw EvalError("'/\(segments.joined(separator: "/"))' is not a document path under /databases/{database}/documents")
        }
        guard segments[1] == RulesLimits.databaseID else {
            throw EvalError("database '\(segments[1])' does not exist")
        }
        let key = AccessState.Key(after: after, segments: segments[prefix.count...])
        readDocuments = true
        if let cached = accessState.cached(key) { return cached }
        let docSegments = Array(key.segments)
        for s in docSegments {
            do { try validateID(s) } catch { throw EvalError("invalid path: \(error.message)") }
        }
        let docPath = DocumentPath(uncheckedSegments: docSegments)
        accessState.count += 1
        guard accessState.count <= accessState.limit else {
            throw EvalError("more than \(accessState.limit) get/exists calls in one request")
        }
        let doc: Document?
        do {
            doc = after ? try lookup.getAfter(docPath) : try lookup.get(docPath)
        } catch {
            lookupFailed = true
            throw EvalError("could not read \(docPath)")
        }
        accessState.remember(key, doc)
        return doc
    }
}
