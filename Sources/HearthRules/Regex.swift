/// A small RE2-style regular expression engine: a parser to a program and a Pike VM that runs in
/// time linear in the input for a given program, so no pattern can make evaluation hang.
/// Supports literals, `.`, classes `[a-z]`/`[^...]`, `\d \w \s \D \W \S`, escapes, groups `( )`/`(?: )`,
/// alternation, `* + ?` (greedy and lazy), `{n}`, `{n,}`, `{n,m}`, anchors `^ $`, and a leading `(?i)`.
struct Regex: Sendable {
    enum Inst: Sendable {
        case char(ranges: [ClosedRange<UInt32>], negated: Bool)
        case any
        case split(Int, Int)
        case jump(Int)
        case assertBegin
        case assertEnd
        case match
    }

    let program: [Inst]

    /// Why a pattern was refused.
    struct SyntaxError: Error, Sendable { let message: String }

    init(_ pattern: String) throws(SyntaxError) {
        guard pattern.utf8.count <= RulesLimits.maxRegexBytes else {
            throw SyntaxError(message: "regular expression is longer than \(RulesLimits.maxRegexBytes) bytes")
        }
        var p = RegexParser(Array(pattern.unicodeScalars))
        let node = try p.parse()
        var c = RegexCompiler(caseInsensitive: p.caseInsensitive)
        try c.emit(node)
        c.program.append(.match)
        guard c.program.count <= RulesLimits.maxRegexProgram else {
            throw SyntaxError(message: "regular expression is too large")
        }
        program = c.program
    }

    /// Ran out of its step budget.
    struct BudgetExceeded: Error {}

    /// True when the whole input matches.
    func matchesWhole(_ input: [Unicode.Scalar], budget: inout Int) throws(BudgetExceeded) -> Bool {
        try run(input, from: 0, anchored: true, whole: true, budget: &budget) != nil
    }

    /// The leftmost-first match starting at or after `from`: its start and end indices.
    func firstMatch(_ input: [Unicode.Scalar], from: Int, budget: inout Int) throws(BudgetExceeded) -> (Int, Int)? {
        try run(input, from: from, anchored: false, whole: false, budget: &budget)
    }

    private func run(_ input: [Unicode.Scalar], from: Int, anchored: Bool, whole: Bool,
                     budget: inout Int) throws(BudgetExceeded) -> (Int, Int)? {
        let n = input.count
        var clist: [(pc: Int, start: Int)] = []
        var nlist: [(pc: Int, start: Int)] = []
        var mark = [Int](repeating: -1, count: program.count)
        var stack: [Int] = []
        var matched: (Int, Int)?

        // Follows jumps, splits and assertions from `pc` at input position `i`, adding runnable threads in
        // priority order; `mark` keeps each instruction once per position.
        func add(_ list: inout [(pc: Int, start: Int)], _ pc0: Int, _ start: Int, _ i: Int, _ gen: Int) throws(BudgetExceeded) {
            stack.removeAll(keepingCapacity: true)
            stack.append(pc0)
            while let pc = stack.popLast() {
                if mark[pc] == gen { continue }
                mark[pc] = gen
                budget -= 1
                if budget < 0 { throw BudgetExceeded() }
                switch program[pc] {
                case .jump(let t): stack.append(t)
                case .split(let a, let b): stack.append(b); stack.append(a)
                case .assertBegin: if i == 0 { stack.append(pc + 1) }
                case .assertEnd: if i == n { stack.append(pc + 1) }
                default: list.append((pc, start))
                }
            }
        }

        // Marks are generation numbers per input position: threads added at position i (from the previous
        // step and from a new start) share generation 2i+1, so each instruction runs once per position.
        var i = from
        while i <= n {
            let gen = i * 2 + 1
            if matched == nil, !anchored || i == from { try add(&clist, 0, i, i, gen) }
            if clist.isEmpty { break }
            nlist.removeAll(keepingCapacity: true)
            let nextGen = (i + 1) * 2 + 1
            for t in clist {
                budget -= 1
                if budget < 0 { throw BudgetExceeded() }
                switch program[t.pc] {
                case .match:
                    if whole, i != n { continue }
                    matched = (t.start, i)
                    break
                case .any:
                    if i < n, input[i] != "\n" { try add(&nlist, t.pc + 1, t.start, i + 1, nextGen) }
                    continue
                case .char(let ranges, let negated):
                    if i < n {
                        let v = input[i].value
                        var hit = false
                        for r in ranges where r.contains(v) { hit = true; break }
                        if hit != negated { try add(&nlist, t.pc + 1, t.start, i + 1, nextGen) }
                    }
                    continue
                default:
                    continue
                }
                // A match cuts every lower-priority thread.
                break
            }
            swap(&clist, &nlist)
            if i == n { break }
            i += 1
        }
        return matched
    }
}

private indirect enum RegexNode {
    case empty
    case chars([ClosedRange<UInt32>], negated: Bool)
    case any
    case begin
    case end
    case concat([RegexNode])
    case alternate([RegexNode])
    case repeated(RegexNode, min: Int, max: Int?, greedy: Bool)
}

private struct RegexParser {
    let s: [Unicode.Scalar]
    var i = 0
    var depth = 0
    var caseInsensitive = false

    init(_ s: [Unicode.Scalar]) { self.s = s }

    mutating func parse() throws(Regex.SyntaxError) -> RegexNode {
        if s.starts(with: Array("(?i)".unicodeScalars)) { caseInsensitive = true; i = 4 }
        let node = try parseAlternation()
        if i < s.count { throw .init(message: "unmatched ')' in regular expression") }
        return node
    }

    private mutating func parseAlternation() throws(Regex.SyntaxError) -> RegexNode {
        depth += 1
        defer { depth -= 1 }
        if depth > RulesLimits.maxRegexNesting { throw .init(message: "regular expression nests too deeply") }
        var branches = [try parseConcat()]
        while i < s.count, s[i] == "|" {
            i += 1
            branches.append(try parseConcat())
        }
        return branches.count == 1 ? branches[0] : .alternate(branches)
    }

    private mutating func parseConcat() throws(Regex.SyntaxError) -> RegexNode {
        var items: [RegexNode] = []
        while i < s.count, s[i] != "|", s[i] != ")" {
            var atom = try parseAtom()
            var quantifier: (Int, Int?)?
            if i < s.count {
                switch s[i] {
                case "*": i += 1; quantifier = (0, nil)
                case "+": i += 1; quantifier = (1, nil)
                case "?": i += 1; quantifier = (0, 1)
                case "{": quantifier = try parseBraces()
                default: break
                }
            }
            if let (lo, hi) = quantifier {
                switch atom {
                case .begin, .end: throw .init(message: "nothing to repeat")
                default: break
                }
                var greedy = true
                if i < s.count, s[i] == "?" { greedy = false; i += 1 }
                atom = .repeated(atom, min: lo, max: hi, greedy: greedy)
                if i < s.count, s[i] == "*" || s[i] == "+" || s[i] == "?" {
                    throw .init(message: "bad repetition operator")
                }
            }
            items.append(atom)
        }
        if items.isEmpty { return .empty }
        return items.count == 1 ? items[0] : .concat(items)
    }

    /// `{n}`, `{n,}`, `{n,m}`; nil (and nothing consumed) when the brace is a literal.
    private mutating func parseBraces() throws(Regex.SyntaxError) -> (Int, Int?)? {
        var j = i + 1
        func number(_ j: inout Int) -> Int? {
            var v = 0, any = false
            while j < s.count, s[j].value >= 48, s[j].value <= 57 {
                v = min(v * 10 + Int(s[j].value - 48), 100_000)
                any = true
                j += 1
            }
            return any ? v : nil
        }
        guard let lo = number(&j) else { return nil }
        var hi: Int? = lo
        if j < s.count, s[j] == "," {
            j += 1
            hi = number(&j)
        }
        guard j < s.count, s[j] == "}" else { return nil }
        if lo > RulesLimits.maxRegexRepeat || (hi ?? 0) > RulesLimits.maxRegexRepeat {
            throw .init(message: "repetition count over \(RulesLimits.maxRegexRepeat)")
        }
        if let h = hi, h < lo { throw .init(message: "bad repetition range {\(lo),\(h)}") }
        i = j + 1
        return (lo, hi)
    }

    private mutating func parseAtom() throws(Regex.SyntaxError) -> RegexNode {
        let c = s[i]
        i += 1
        switch c {
        case "(":
            if i + 1 < s.count, s[i] == "?", s[i + 1] == ":" { i += 2 } else if i < s.count, s[i] == "?" {
                throw .init(message: "unsupported group syntax '(?'")
            }
            let inner = try parseAlternation()
            guard i < s.count, s[i] == ")" else { throw .init(message: "missing ')' in regular expression") }
            i += 1
            return inner
        case ".": return .any
        case "^": return .begin
        case "$": return .end
        case "[": return try parseClass()
        case "\\": return try parseEscape(inClass: false).node
        case "*", "+", "?": throw .init(message: "nothing to repeat before '\(c)'")
        default: return .chars([c.value...c.value], negated: false)
        }
    }

    private mutating func parseEscape(inClass: Bool) throws(Regex.SyntaxError) -> (node: RegexNode, ranges: [ClosedRange<UInt32>], negated: Bool) {
        guard i < s.count else { throw .init(message: "trailing '\\' in regular expression") }
        let e = s[i]
        i += 1
        let digit: [ClosedRange<UInt32>] = [48...57]
        let word: [ClosedRange<UInt32>] = [48...57, 65...90, 95...95, 97...122]
        let space: [ClosedRange<UInt32>] = [9...13, 32...32]
        var ranges: [ClosedRange<UInt32>]
        var negated = false
        switch e {
        case "d": ranges = digit
        case "D": ranges = digit; negated = true
        case "w": ranges = word
        case "W": ranges = word; negated = true
        case "s": ranges = space
        case "S": ranges = space; negated = true
        case "n": ranges = [10...10]
        case "t": ranges = [9...9]
        case "r": ranges = [13...13]
        case "f": ranges = [12...12]
        case "v": ranges = [11...11]
        case "x":
            var v: UInt32 = 0
            for _ in 0..<2 {
                guard i < s.count, let h = Lexer.hexDigit(UInt8(truncatingIfNeeded: s[i].value)), s[i].isASCII else {
                    throw .init(message: "\\x needs two hex digits")
                }
                v = v << 4 | UInt32(h)
                i += 1
            }
            ranges = [v...v]
        default:
            if e.properties.isAlphabetic || ("0"..."9").contains(e) {
                throw .init(message: "unsupported escape '\\\(e)' in regular expression")
            }
            ranges = [e.value...e.value]
        }
        return (.chars(ranges, negated: negated), ranges, negated)
    }

    private mutating func parseClass() throws(Regex.SyntaxError) -> RegexNode {
        var negated = false
        if i < s.count, s[i] == "^" { negated = true; i += 1 }
        var ranges: [ClosedRange<UInt32>] = []
        var negatedParts: [[ClosedRange<UInt32>]] = []
        var first = true
        while true {
            guard i < s.count else { throw .init(message: "missing ']' in regular expression") }
            let c = s[i]
            if c == "]", !first { i += 1; break }
            first = false
            var lo: UInt32
            if c == "\\" {
                i += 1
                let esc = try parseEscape(inClass: true)
                if esc.negated { negatedParts.append(esc.ranges); continue }
                if esc.ranges.count > 1 || esc.ranges[0].count > 1 { ranges += esc.ranges; continue }
                lo = esc.ranges[0].lowerBound
            } else {
                lo = c.value
                i += 1
            }
            if i + 1 < s.count, s[i] == "-", s[i + 1] != "]" {
                i += 1
                var hi: UInt32
                if s[i] == "\\" {
                    i += 1
                    let esc = try parseEscape(inClass: true)
                    guard esc.ranges.count == 1, !esc.negated else { throw .init(message: "bad class range") }
                    hi = esc.ranges[0].lowerBound
                } else {
                    hi = s[i].value
                    i += 1
                }
                guard lo <= hi else { throw .init(message: "bad class range") }
                ranges.append(lo...hi)
            } else {
                ranges.append(lo...lo)
            }
        }
        // Fold negated escapes (`[\D]`) into positive ranges over the scalar space.
        for part in negatedParts { ranges += complement(part) }
        return .chars(ranges, negated: negated)
    }

    private func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var out: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
            next = max(next, r.upperBound + 1)
        }
        if next <= 0x10FFFF { out.append(next...0x10FFFF) }
        return out
    }
}

private struct RegexCompiler {
    let caseInsensitive: Bool
    var program: [Regex.Inst] = []

    private mutating func append(_ inst: Regex.Inst) throws(Regex.SyntaxError) {
        guard program.count < RulesLimits.maxRegexProgram else { throw .init(message: "regular expression is too large") }
        program.append(inst)
    }

    mutating func emit(_ node: RegexNode) throws(Regex.SyntaxError) {
        switch node {
        case .empty: break
        case .any: try append(.any)
        case .begin: try append(.assertBegin)
        case .end: try append(.assertEnd)
        case .chars(var ranges, let negated):
            if caseInsensitive {
                for r in ranges {
                    let lower = max(r.lowerBound, 65), upper = min(r.upperBound, 90)
                    if lower <= upper { ranges.append((lower + 32)...(upper + 32)) }
                    let l2 = max(r.lowerBound, 97), u2 = min(r.upperBound, 122)
                    if l2 <= u2 { ranges.append((l2 - 32)...(u2 - 32)) }
                }
            }
            try append(.char(ranges: ranges, negated: negated))
        case .concat(let items):
            for item in items { try emit(item) }
        case .alternate(let branches):
            var jumps: [Int] = []
            for (k, b) in branches.enumerated() {
                if k < branches.count - 1 {
                    let split = program.count
                    try append(.split(split + 1, -1))
                    try emit(b)
                    jumps.append(program.count)
                    try append(.jump(-1))
                    program[split] = .split(split + 1, program.count)
                } else {
                    try emit(b)
                }
            }
            for j in jumps { program[j] = .jump(program.count) }
        case .repeated(let inner, let minCount, let maxCount, let greedy):
            for _ in 0..<minCount { try emit(inner) }
            if let maxCount {
                // Optional copies: each may be skipped, which skips the rest.
                var splits: [Int] = []
                for _ in minCount..<maxCount {
                    splits.append(program.count)
                    try append(.split(-1, -1))
                    try emit(inner)
                }
                let end = program.count
                for sp in splits { program[sp] = greedy ? .split(sp + 1, end) : .split(end, sp + 1) }
            } else {
                let loop = program.count
                try append(.split(-1, -1))
                try emit(inner)
                try append(.jump(loop))
                let end = program.count
                program[loop] = greedy ? .split(loop + 1, end) : .split(end, loop + 1)
            }
        }
    }
}
