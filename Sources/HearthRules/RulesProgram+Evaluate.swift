import HearthCore

/// One element of a request path as the matcher sees it.
enum PathElement: Sendable, Equatable {
    case literal(String)
    /// The id of a document a query could return.
    case unknownID
    /// Any number (zero or more) of segments: the parents of a collection group's collections.
    case unknownPrefix
}

extension RulesProgram {
    /// Decides one request: allowed when any matching `allow` for its method is definitely true.
    public func evaluate(_ request: RulesRequest, lookup: any RulesDocumentLookup) -> RulesDecision {
        evaluate(request, lookup: lookup, access: nil)
    }

    /// Decides every write of a batch or transaction; the writes share one budget of
    /// `RulesLimits.maxAccessCallsBatch` distinct document reads. The batch is allowed only if every write is.
    public func evaluateBatch(_ requests: [RulesRequest], lookup: any RulesDocumentLookup) -> [RulesDecision] {
        let access = AccessState(limit: RulesLimits.maxAccessCallsBatch)
        return requests.map { evaluate($0, lookup: lookup, access: access) }
    }

    private func evaluate(_ request: RulesRequest, lookup: any RulesDocumentLookup, access: AccessState?) -> RulesDecision {
        var made: Evaluator?
        return evaluate(request, lookup: lookup, access: access, made: &made)
    }

    /// Decides one request, leaving in `made` the evaluator of its conditions (nil when none was evaluated),
    /// for the caller to learn what the decision read.
    func evaluate(_ request: RulesRequest, lookup: any RulesDocumentLookup, access: AccessState?,
                  made: inout Evaluator?) -> RulesDecision {
        let elements = Self.pathElements(for: request)
        guard request.method == .list else {
            return decideEach(roots, elements, request.method, &made) {
                Evaluator(program: self, request: request, lookup: lookup, access: access)
            }
        }

        var budget = RulesLimits.maxMatchBindings
        var bindings: [(name: String, value: RulesValue)] = []
        bindings.reserveCapacity(4)
        var lastDenial = RulesDenial.noRuleMatched

        // A query: the same `allow`s are decided once per disjunct of its filter, so they are collected first.
        var candidates: [Candidate] = []
        for root in roots {
            collect(root, elements[...], &bindings, request.method, &budget) { allow, bindings, scope in
                candidates.append((allow, bindings, scope))
                return false
            }
        }
        if candidates.isEmpty { return .deny(.noRuleMatched) }
        let pinned = request.query?.disjuncts ?? []
        for disjunct in pinned.isEmpty ? [[:]] : pinned {
            let listResource: RulesValue = .map(["data": Self.partialData(disjunct), "id": .unknown, "__name__": .unknown])
            var granted = false
            for candidate in candidates {
                switch decide(candidate.allow, candidate.bindings, candidate.scope, listResource, &made,
                              { Evaluator(program: self, request: request, lookup: lookup, access: access) }, &lastDenial) {
                case .granted: granted = true
                case .fatal: return .deny(lastDenial)
                case .undecided: break
                }
                if granted { break }
            }
            if !granted { return .deny(lastDenial) }
        }
        return .allow
    }

    /// Decides one request on `service firebase.storage`: allowed when any matching `allow` for its method
    /// holds. `firestore.get()` and `firestore.exists()` read documents through `lookup`.
    public func evaluateStorage(_ request: StorageRulesRequest, lookup: any RulesDocumentLookup) -> RulesDecision {
        // As in Firebase, listing files takes rules_version 2.
        if request.method == .list, version < 2 {
            return .deny(RulesDenial(location: nil, expression: nil, reason: "listing files takes rules_version = '2'"))
        }
        var made: Evaluator?
        return decideEach(storageRoots, request.rulesPath.map(PathElement.literal), request.method, &made) {
            Evaluator(program: self, storage: request, lookup: lookup)
        }
    }

    /// One object or document: each matching `allow` is decided as the walk finds it, in the order the walk
    /// finds them, and the first that holds ends the walk. `makeEvaluator` makes the evaluator on the first
    /// condition; it is reused for the rest of the request.
    private func decideEach(_ roots: [Match], _ elements: [PathElement], _ method: RulesMethod, _ made: inout Evaluator?,
                            _ makeEvaluator: () -> Evaluator) -> RulesDecision {
        var budget = RulesLimits.maxMatchBindings
        var bindings: [(name: String, value: RulesValue)] = []
        bindings.reserveCapacity(4)
        var lastDenial = RulesDenial.noRuleMatched
        var outcome: Outcome = .undecided
        for root in roots where outcome == .undecided {
            collect(root, elements[...], &bindings, method, &budget) { allow, bindings, scope in
                switch decide(allow, bindings, scope, nil, &made, makeEvaluator, &lastDenial) {
                case .granted: outcome = .granted
                case .fatal: outcome = .fatal
                case .undecided: break
                }
                return outcome != .undecided
            }
        }
        return outcome == .granted ? .allow : .deny(lastDenial)
    }

    /// What deciding one `allow` came to: it holds, it does not (try the next), or evaluation must stop.
    private enum Outcome { case granted, undecided, fatal }

    /// Decides one matching `allow` with its wildcards bound; a denial is left in `lastDenial`. The evaluator
    /// is made on the first condition and reused for the rest of the request.
    private func decide(_ allow: Allow, _ bindings: [(name: String, value: RulesValue)], _ scope: FunctionScope,
                        _ listResource: RulesValue?, _ made: inout Evaluator?, _ makeEvaluator: () -> Evaluator,
                        _ lastDenial: inout RulesDenial) -> Outcome {
        guard let condition = allow.condition else { return .granted }
        let evaluator = made ?? makeEvaluator()
        made = evaluator
        if let listResource { evaluator.resource = listResource }
        evaluator.expressionsEvaluated = 0
        evaluator.callDepth = 0
        evaluator.bindings = bindings
        // The walk goes on with its own bindings; holding them here would make it copy them.
        defer { evaluator.bindings = [] }
        do {
            switch try evaluator.eval(condition, Frame(functions: scope)) {
            case .bool(true): return .granted
            case .bool(false): lastDenial = denial(allow, "condition is false")
            case .unknown:
                lastDenial = denial(allow, "the query does not restrict the documents to ones the condition allows (rules are not filters)")
            case let v: lastDenial = denial(allow, "condition is \(v.typeName), not bool")
            }
        } catch {
            lastDenial = denial(allow, "error: \(error.message)")
            if error.fatal { return .fatal }
        }
        return .undecided
    }

    private func denial(_ allow: Allow, _ reason: String) -> RulesDenial {
        RulesDenial(location: allow.location, expression: allow.text, reason: reason)
    }

    /// The request path as matcher elements: `databases/(default)/documents/...`, with unknowns for queries.
    static func pathElements(for request: RulesRequest) -> [PathElement] {
        var out: [PathElement] = []
        out.reserveCapacity(RulesValue.documentsPrefix.count + request.path.segments.count + 2)
        for s in RulesValue.documentsPrefix { out.append(.literal(s)) }
        if request.method == .list, let query = request.query {
            switch query.target {
            case .collection(let c):
                out += c.segments.map(PathElement.literal)
                out.append(.unknownID)
            case .collectionGroup(let id, let under):
                if let under { out += under.segments.map(PathElement.literal) }
                out.append(.unknownPrefix)
                out.append(.literal(id))
                out.append(.unknownID)
            }
        } else if request.method == .list {
            out += request.path.segments.dropLast().map(PathElement.literal)
            out.append(.unknownID)
        } else {
            for s in request.path.segments { out.append(.literal(s)) }
        }
        return out
    }

    /// An `allow` for the request's method whose match consumed the whole path, with the wildcards bound.
    typealias Candidate = (allow: Allow, bindings: [(name: String, value: RulesValue)], scope: FunctionScope)

    /// Receives each candidate as the walk finds it: the `allow`, the wildcards bound (valid only during the
    /// call) and the functions in scope. Returns true to end the walk.
    typealias Visit = (Allow, [(name: String, value: RulesValue)], FunctionScope) -> Bool

    /// Walks the match tree: every way `node` matches a prefix of `path` binds its wildcards; a match that
    /// consumes the whole path contributes its `allow`s for the method, the others descend to children.
    /// `bindings` holds the enclosing matches' wildcards and is left as it was found.
    /// Returns true when `visit` ended the walk.
    @discardableResult
    private func collect(_ node: Match, _ path: ArraySlice<PathElement>, _ bindings: inout [(name: String, value: RulesValue)],
                         _ method: RulesMethod, _ budget: inout Int, _ visit: Visit) -> Bool {
        guard node.hasRecursiveWildcard else {
            // At most one way to match: bind in place instead of collecting the ways first.
            guard budget > 0, path.count >= node.pattern.count else { return false }
            let mark = bindings.count
            defer { bindings.removeSubrange(mark...) }
            var i = path.startIndex
            for segment in node.pattern {
                switch (segment, path[i]) {
                case (.literal(let s), .literal(let e)): guard sameUTF8(s, e) else { return false }
                case (.literal, _): return false
                case (.wildcard(let name), .literal(let e)): bindings.append((name, .string(e)))
                case (.wildcard(let name), .unknownID): bindings.append((name, .unknown))
                case (.wildcard, .unknownPrefix), (.recursive, _): return false
                }
                i += 1
            }
            budget -= 1
            return matched(node, path[i...], &bindings, method, &budget, visit)
        }
        var ends: [(rest: ArraySlice<PathElement>, bindings: [(name: String, value: RulesValue)])] = []
        matchPattern(node.pattern[...], path, bindings, &ends, &budget)
        for end in ends {
            var endBindings = end.bindings
            if matched(node, end.rest, &endBindings, method, &budget, visit) { return true }
        }
        return false
    }

    /// One way `node` matched, leaving `rest` of the path. Returns true when `visit` ended the walk.
    private func matched(_ node: Match, _ rest: ArraySlice<PathElement>, _ bindings: inout [(name: String, value: RulesValue)],
                         _ method: RulesMethod, _ budget: inout Int, _ visit: Visit) -> Bool {
        if rest.isEmpty {
            let wanted = Methods(method)
            for allow in node.allows where allow.methods.contains(wanted) {
                if visit(allow, bindings, node.scope) { return true }
            }
        } else {
            for child in node.children where collect(child, rest, &bindings, method, &budget, visit) { return true }
        }
        return false
    }

    private func matchPattern(_ pattern: ArraySlice<PatternSegment>, _ path: ArraySlice<PathElement>,
                              _ bindings: [(name: String, value: RulesValue)],
                              _ out: inout [(rest: ArraySlice<PathElement>, bindings: [(name: String, value: RulesValue)])],
                              _ budget: inout Int) {
        guard budget > 0 else { return }
        guard let segment = pattern.first else {
            budget -= 1
            out.append((path, bindings))
            return
        }
        let restPattern = pattern.dropFirst()
        switch segment {
        case .literal(let s):
            guard let e = path.first, case .literal(let t) = e, sameUTF8(s, t) else { return }
            matchPattern(restPattern, path.dropFirst(), bindings, &out, &budget)
        case .wildcard(let name):
            guard let e = path.first else { return }
            switch e {
            case .literal(let s): matchPattern(restPattern, path.dropFirst(), bindings + [(name, .string(s))], &out, &budget)
            case .unknownID: matchPattern(restPattern, path.dropFirst(), bindings + [(name, .unknown)], &out, &budget)
            case .unknownPrefix: return
            }
        case .recursive(let name):
            // Version 1: the rest of the path, at least one segment. Version 2: zero or more segments.
            // A collection group's unknown parents (`unknownPrefix`) can only be consumed here, as a whole:
            // literal and single wildcards never match them.
            let counts: [Int] = version == 1 ? (path.isEmpty ? [] : [path.count]) : Array(0...path.count)
            for k in counts {
                let consumed = path.prefix(k)
                var segments: [String] = []
                var unknown = false
                for e in consumed {
                    if case .literal(let s) = e { segments.append(s) } else { unknown = true }
                }
                let value: RulesValue = unknown ? .unknown : .path(segments)
                matchPattern(restPattern, path.dropFirst(k), bindings + [(name, value)], &out, &budget)
            }
        }
    }

    /// The data of a document a query could return: the fields its `==` filters pin are known, others unknown.
    static func partialData(_ pinned: [FieldPath: Value]) -> RulesValue {
        var top: [String: [(ArraySlice<String>, Value)]] = [:]
        for (path, value) in pinned where !path.isDocumentName {
            top[path.segments[0], default: []].append((path.segments.dropFirst(), value))
        }
        return .partialMap(top.mapValues(nest))
    }

    private static func nest(_ entries: [(ArraySlice<String>, Value)]) -> RulesValue {
        if let whole = entries.first(where: { $0.0.isEmpty }) { return RulesValue(whole.1) }
        var next: [String: [(ArraySlice<String>, Value)]] = [:]
        for (rest, value) in entries { next[rest.first!, default: []].append((rest.dropFirst(), value)) }
        return .partialMap(next.mapValues(nest))
    }
}
