#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthCore

/// Names and arities of the built-in functions, shared by the checker and the evaluator.
enum Builtins {
    /// Global functions.
    static let globals: [String: Int] = [
        "get": 1, "exists": 1, "getAfter": 1, "existsAfter": 1,
        "int": 1, "float": 1, "string": 1, "bool": 1, "path": 1, "debug": 1,
    ]
    /// Namespaced functions: `math.abs(x)`, `timestamp.date(y, m, d)`, ...
    static let namespaces: [String: [String: Int]] = [
        "math": ["abs": 1, "ceil": 1, "floor": 1, "round": 1, "sqrt": 1, "pow": 2, "isInfinite": 1, "isNaN": 1],
        "timestamp": ["value": 1, "date": 3],
        "duration": ["value": 2, "time": 4, "abs": 1],
        "latlng": ["value": 2],
        "hashing": ["crc32": 1, "crc32c": 1, "md5": 1, "sha256": 1],
        // Storage rules read documents through these.
        "firestore": ["get": 1, "exists": 1],
    ]
}

extension Evaluator {
    private func arity(_ name: String, _ args: [RulesValue], _ n: Int) throws(EvalError) {
        guard args.count == n else { throw EvalError("\(name)() takes \(n) argument\(n == 1 ? "" : "s"), got \(args.count)") }
    }

    private func int(_ v: RulesValue, _ what: String) throws(EvalError) -> Int64 {
        guard case .int(let i) = v else { throw EvalError("\(what) must be an int, not \(v.typeName)") }
        return i
    }

    private func string(_ v: RulesValue, _ what: String) throws(EvalError) -> String {
        guard case .string(let s) = v else { throw EvalError("\(what) must be a string, not \(v.typeName)") }
        return s
    }

    private func bytesOrString(_ v: RulesValue, _ what: String) throws(EvalError) -> [UInt8] {
        switch v {
        case .bytes(let b): return b
        case .string(let s): return Array(s.utf8)
        default: throw EvalError("\(what) needs bytes or a string, not \(v.typeName)")
        }
    }

    private func elements(_ v: RulesValue, _ what: String) throws(EvalError) -> [RulesValue] {
        switch v {
        case .list(let items): return items
        case .set(let s): return s.elements
        default: throw EvalError("\(what) needs a list or set, not \(v.typeName)")
        }
    }

    // MARK: Globals

    func callGlobal(_ name: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        guard let n = Builtins.globals[name] else { throw EvalError("unknown function '\(name)'") }
        try arity(name, args, n)
        if args.contains(where: \.isUnknown) { return .unknown }
        let a = args[0]
        switch name {
        case "get", "getAfter":
            guard let doc = try access(a, after: name == "getAfter") else { return .null }
            return .lazy(LazyResource(doc))
        case "exists", "existsAfter":
            return .bool(try access(a, after: name == "existsAfter") != nil)
        case "int":
            switch a {
            case .int: return a
            case .float(let d):
                guard d.isFinite, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else {
                    throw EvalError("\(RulesValue.formatFloat(d)) does not fit an int")
                }
                return .int(Int64(d))
            case .string(let s):
                guard let i = Int64(s.trimmingSpaces) else { throw EvalError("'\(s)' is not an int") }
                return .int(i)
            default: throw EvalError("int() cannot convert \(a.typeName)")
            }
        case "float":
            switch a {
            case .int(let i): return .float(Double(i))
            case .float: return a
            case .string(let s):
                guard let d = Double(s.trimmingSpaces) else { throw EvalError("'\(s)' is not a float") }
                return .float(d)
            default: throw EvalError("float() cannot convert \(a.typeName)")
            }
        case "string":
            switch a {
            case .string: return a
            case .null: return .string("null")
            case .bool(let b): return .string(b ? "true" : "false")
            case .int(let i): return .string(String(i))
            case .float(let d): return .string(RulesValue.formatFloat(d))
            case .path(let p): return .string("/" + p.joined(separator: "/"))
            case .bytes(let b): return .string(String(decoding: b, as: UTF8.self))
            case .timestamp(let t): return .string(t.rfc3339)
            default: throw EvalError("string() cannot convert \(a.typeName)")
            }
        case "bool":
            switch a {
            case .bool: return a
            case .string("true"): return .bool(true)
            case .string("false"): return .bool(false)
            default: throw EvalError("bool() cannot convert \(a.debugDescription)")
            }
        case "path":
            switch a {
            case .path: return a
            case .string(let s): return .path(RulesValue.pathSegments(s))
            default: throw EvalError("path() needs a string, not \(a.typeName)")
            }
        default: // debug
            return a
        }
    }

    // MARK: Namespaces

    func callNamespace(_ ns: String, _ name: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        guard let n = Builtins.namespaces[ns]?[name] else { throw EvalError("unknown function '\(ns).\(name)'") }
        try arity("\(ns).\(name)", args, n)
        if args.contains(where: \.isUnknown) { return .unknown }
        switch (ns, name) {
        case ("firestore", _):
            guard storage != nil else {
                throw EvalError("firestore.\(name)() is for storage rules; Firestore rules use \(name)()")
            }
            let doc = try access(args[0], after: false)
            if name == "get" { return doc.map { .lazy(LazyResource($0)) } ?? .null }
            return .bool(doc != nil)
        case ("math", "abs"):
            switch args[0] {
            case .int(let i):
                guard i != Int64.min else { throw EvalError("integer overflow") }
                return .int(Swift.abs(i))
            case .float(let d): return .float(Swift.abs(d))
            default: throw EvalError("math.abs needs a number")
            }
        case ("math", "ceil"), ("math", "floor"), ("math", "round"):
            if case .int = args[0] { return args[0] }
            let d = try double(args[0])
            let r: Double = name == "ceil" ? d.rounded(.up) : name == "floor" ? d.rounded(.down) : d.rounded(.toNearestOrAwayFromZero)
            guard r.isFinite, r >= -9.223372036854775808e18, r < 9.223372036854775808e18 else {
                throw EvalError("math.\(name) result does not fit an int")
            }
            return .int(Int64(r))
        case ("math", "sqrt"):
            let d = try double(args[0])
            guard d >= 0 else { throw EvalError("math.sqrt of a negative number") }
            return .float(d.squareRoot())
        case ("math", "pow"): return .float(pow(try double(args[0]), try double(args[1])))
        case ("math", "isInfinite"): return .bool(try double(args[0]).isInfinite)
        case ("math", "isNaN"): return .bool(try double(args[0]).isNaN)
        case ("timestamp", "value"):
            let ms = try int(args[0], "epochMillis")
            let (s, rest) = floorDiv(ms, 1000)
            guard let t = RulesTime(seconds: s, nanos: rest * 1_000_000) else { throw EvalError("timestamp out of range") }
            return .timestamp(t)
        case ("timestamp", "date"):
            let y = try int(args[0], "year"), m = try int(args[1], "month"), d = try int(args[2], "day")
            guard (1...9999).contains(y), (1...12).contains(m), d >= 1, d <= Calendar.daysIn(month: m, year: y) else {
                throw EvalError("\(y)-\(m)-\(d) is not a valid date")
            }
            return .timestamp(RulesTime(seconds: Calendar.days(fromCivil: y, m, d) * 86_400, nanos: 0)!)
        case ("duration", "value"):
            let unit = try string(args[1], "unit")
            let nanosPerUnit: Int64
            switch unit {
            case "w": nanosPerUnit = 604_800_000_000_000
            case "d": nanosPerUnit = 86_400_000_000_000
            case "h": nanosPerUnit = 3_600_000_000_000
            case "m": nanosPerUnit = 60_000_000_000
            case "s": nanosPerUnit = 1_000_000_000
            case "ms": nanosPerUnit = 1_000_000
            case "ns": nanosPerUnit = 1
            default: throw EvalError("unknown duration unit '\(unit)' (w, d, h, m, s, ms, ns)")
            }
            let magnitude = try int(args[0], "magnitude")
            // Split into seconds and nanos without overflowing 64 bits.
            let perSecond: Int64 = 1_000_000_000
            let d: RulesDuration?
            if nanosPerUnit >= perSecond {
                let (secs, o) = magnitude.multipliedReportingOverflow(by: nanosPerUnit / perSecond)
                d = o ? nil : RulesDuration(seconds: secs, nanos: 0)
            } else {
                let unitsPerSecond = perSecond / nanosPerUnit
                d = RulesDuration(seconds: magnitude / unitsPerSecond, nanos: (magnitude % unitsPerSecond) * nanosPerUnit)
            }
            guard let d else { throw EvalError("duration out of range") }
            return .duration(d)
        case ("duration", "time"):
            let h = try int(args[0], "hours"), m = try int(args[1], "minutes")
            let s = try int(args[2], "seconds"), ns = try int(args[3], "nanos")
            guard Swift.abs(h) <= 87_660_000, Swift.abs(m) <= 5_259_600_000, Swift.abs(s) <= RulesDuration.maxSeconds,
                  let d = RulesDuration(seconds: h * 3600 + m * 60 + s, nanos: ns) else {
                throw EvalError("duration out of range")
            }
            return .duration(d)
        case ("duration", "abs"):
            guard case .duration(let d) = args[0] else { throw EvalError("duration.abs needs a duration") }
            return .duration(d.magnitude)
        case ("latlng", "value"):
            let lat = try double(args[0]), lng = try double(args[1])
            guard (-90...90).contains(lat), (-180...180).contains(lng) else { throw EvalError("latlng out of range") }
            return .latlng(lat, lng)
        case ("hashing", "crc32"): return .bytes(Hashing.crc32(try bytesOrString(args[0], "hashing.crc32")))
        case ("hashing", "crc32c"): return .bytes(Hashing.crc32c(try bytesOrString(args[0], "hashing.crc32c")))
        case ("hashing", "md5"): return .bytes(Hashing.md5(try bytesOrString(args[0], "hashing.md5")))
        case ("hashing", "sha256"): return .bytes(Hashing.sha256(try bytesOrString(args[0], "hashing.sha256")))
        default: throw EvalError("unknown function '\(ns).\(name)'")
        }
    }

    // MARK: Methods

    func callMethod(_ target: RulesValue, _ name: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        if args.contains(where: \.isUnknown) { return .unknown }
        if case .partialMap(let m) = target {
            // A pinned key of a queried document is known; everything else about it is not.
            if name == "get", args.count == 2, case .string(let k) = args[0], let v = m[k] { return v }
            return .unknown
        }
        if target.isUnknown || args.contains(where: \.isUnknown) { return .unknown }
        if case .lazy(let m) = target {
            // The common reads need no conversion of the whole map; the rest see it converted.
            if name == "size", args.isEmpty { return .int(Int64(m.count)) }
            if name == "get", args.count == 2, case .string(let k) = args[0] { return m[k] ?? args[1] }
            return try mapMethod(m.materialized, name, args)
        }
        switch target {
        case .string(let s): return try stringMethod(s, name, args)
        case .list(let items): return try listMethod(items, name, args)
        case .set(let set): return try setMethod(set, name, args)
        case .map(let m): return try mapMethod(m, name, args)
        case .mapDiff(let d):
            try arity(name, args, 0)
            switch name {
            case "addedKeys": return .set(d.addedKeys)
            case "removedKeys": return .set(d.removedKeys)
            case "changedKeys": return .set(d.changedKeys)
            case "affectedKeys": return .set(d.affectedKeys)
            case "unchangedKeys": return .set(d.unchangedKeys)
            default: break
            }
        case .timestamp(let t):
            try arity(name, args, 0)
            let c = t.civil
            switch name {
            case "date": return .timestamp(t.date)
            case "year": return .int(c.year)
            case "month": return .int(c.month)
            case "day": return .int(c.day)
            case "hours": return .int(t.secondOfDay / 3600)
            case "minutes": return .int(t.secondOfDay % 3600 / 60)
            case "seconds": return .int(t.secondOfDay % 60)
            case "nanos": return .int(t.nanos)
            case "dayOfWeek": return .int(t.dayOfWeek)
            case "dayOfYear": return .int(t.dayOfYear)
            case "time": return .duration(RulesDuration(seconds: t.secondOfDay, nanos: t.nanos)!)
            case "toMillis":
                return .int(t.seconds * 1000 + t.nanos / 1_000_000)
            default: break
            }
        case .duration(let d):
            try arity(name, args, 0)
            switch name {
            case "seconds": return .int(d.seconds)
            case "nanos": return .int(d.nanos)
            default: break
            }
        case .latlng(let lat, let lng):
            switch name {
            case "latitude": try arity(name, args, 0); return .float(lat)
            case "longitude": try arity(name, args, 0); return .float(lng)
            case "distance":
                try arity(name, args, 1)
                guard case .latlng(let lat2, let lng2) = args[0] else { throw EvalError("distance needs a latlng") }
                return .float(Self.haversine(lat, lng, lat2, lng2))
            default: break
            }
        case .bytes(let b):
            try arity(name, args, 0)
            switch name {
            case "size": return .int(Int64(b.count))
            case "toBase64": return .string(Base64.encode(b))
            case "toHexString": return .string(b.map(hex2).joined().uppercased())
            default: break
            }
        case .path(let p):
            if name == "bind" {
                try arity(name, args, 1)
                guard case .map(let m) = args[0] else { throw EvalError("bind needs a map") }
                return .path(p.map { seg in
                    if seg.hasPrefix("$("), seg.hasSuffix(")"), case .string(let v)? = m[String(seg.dropFirst(2).dropLast())] {
                        return v
                    }
                    return seg
                })
            }
        default: break
        }
        throw EvalError("\(target.typeName) has no method '\(name)' taking \(args.count) argument\(args.count == 1 ? "" : "s")")
    }

    private static func haversine(_ lat1: Double, _ lng1: Double, _ lat2: Double, _ lng2: Double) -> Double {
        let r = 6_371_008.8
        let rad = Double.pi / 180
        let dLat = (lat2 - lat1) * rad, dLng = (lng2 - lng1) * rad
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * rad) * cos(lat2 * rad) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * r * asin(min(1, a.squareRoot()))
    }

    private func regex(_ pattern: String) throws(EvalError) -> Regex {
        if let r = regexCache[pattern] { return r }
        do {
            let r = try Regex(pattern)
            regexCache[pattern] = r
            return r
        } catch {
            throw EvalError("bad regular expression: \(error.message)")
        }
    }

    private func stringMethod(_ s: String, _ name: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch name {
        case "size":
            try arity(name, args, 0)
            return .int(Int64(s.unicodeScalars.count))
        case "lower": try arity(name, args, 0); return .string(s.lowercased())
        case "upper": try arity(name, args, 0); return .string(s.uppercased())
        case "trim": try arity(name, args, 0); return .string(s.trimmingSpaces)
        case "toUtf8": try arity(name, args, 0); return .bytes(Array(s.utf8))
        case "matches":
            try arity(name, args, 1)
            let re = try regex(try string(args[0], "matches pattern"))
            do { return .bool(try re.matchesWhole(Array(s.unicodeScalars), budget: &regexBudget)) } catch {
                throw EvalError("regular expression work limit exceeded")
            }
        case "split":
            try arity(name, args, 1)
            let re = try regex(try string(args[0], "split pattern"))
            let input = Array(s.unicodeScalars)
            var parts: [RulesValue] = []
            var pos = 0, searchFrom = 0
            do {
                while searchFrom <= input.count, let (ms, me) = try re.firstMatch(input, from: searchFrom, budget: &regexBudget) {
                    if me == ms {
                        // An empty match splits nothing here; look again one character on.
                        searchFrom = ms + 1
                        continue
                    }
                    parts.append(.string(Self.text(input[pos..<ms])))
                    guard parts.count < RulesLimits.maxCollectionSize else { throw EvalError("split produces too many parts") }
                    pos = me
                    searchFrom = me
                }
            } catch let e as EvalError { throw e } catch {
                throw EvalError("regular expression work limit exceeded")
            }
            parts.append(.string(Self.text(input[pos...])))
            return .list(parts)
        case "replace":
            try arity(name, args, 2)
            let re = try regex(try string(args[0], "replace pattern"))
            let replacement = try string(args[1], "replacement")
            let input = Array(s.unicodeScalars)
            var out = String.UnicodeScalarView()
            var pos = 0
            do {
                while pos <= input.count, let (ms, me) = try re.firstMatch(input, from: pos, budget: &regexBudget) {
                    out.append(contentsOf: input[pos..<ms])
                    out.append(contentsOf: replacement.unicodeScalars)
                    guard out.count <= RulesLimits.maxStringBytes else { throw EvalError("string too long") }
                    if me == ms {
                        if ms < input.count { out.append(input[ms]) }
                        pos = ms + 1
                    } else {
                        pos = me
                    }
                }
            } catch let e as EvalError { throw e } catch {
                throw EvalError("regular expression work limit exceeded")
            }
            if pos < input.count { out.append(contentsOf: input[pos...]) }
            return .string(String(out))
        default:
            throw EvalError("string has no method '\(name)'")
        }
    }

    private static func text(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var v = String.UnicodeScalarView()
        v.append(contentsOf: scalars)
        return String(v)
    }

    private func listMethod(_ items: [RulesValue], _ name: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch name {
        case "size": try arity(name, args, 0); return .int(Int64(items.count))
        case "hasAll", "hasAny", "hasOnly":
            try arity(name, args, 1)
            return try membership(RulesSet(items), name, try elements(args[0], name))
        case "join":
            try arity(name, args, 1)
            let sep = try string(args[0], "separator")
            var parts: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw EvalError("join needs a list of strings") }
                parts.append(s)
            }
            let joined = parts.joined(separator: sep)
            guard joined.utf8.count <= RulesLimits.maxStringBytes else { throw EvalError("string too long") }
            return .string(joined)
        case "concat":
            try arity(name, args, 1)
            guard case .list(let other) = args[0] else { throw EvalError("concat needs a list") }
            guard items.count + other.count <= RulesLimits.maxCollectionSize else { throw EvalError("list too long") }
            return .list(items + other)
        case "removeAll":
            try arity(name, args, 1)
            let remove = RulesSet(try elements(args[0], name))
            return .list(items.filter { !remove.contains($0) })
        case "toSet": try arity(name, args, 0); return .set(RulesSet(items))
        default: throw EvalError("list has no method '\(name)'")
        }
    }

    private func membership(_ set: RulesSet, _ name: String, _ other: [RulesValue]) throws(EvalError) -> RulesValue {
        switch name {
        case "hasAll": return .bool(other.allSatisfy { set.contains($0) })
        case "hasAny": return .bool(other.contains { set.contains($0) })
        default:
            let allowed = RulesSet(other)
            return .bool(set.elements.allSatisfy { allowed.contains($0) })
        }
    }

    private func setMethod(_ set: RulesSet, _ name: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch name {
        case "size": try arity(name, args, 0); return .int(Int64(set.count))
        case "hasAll", "hasAny", "hasOnly":
            try arity(name, args, 1)
            return try membership(set, name, try elements(args[0], name))
        case "union":
            try arity(name, args, 1)
            let other = try elements(args[0], name)
            guard set.count + other.count <= RulesLimits.maxCollectionSize else { throw EvalError("set too large") }
            return .set(RulesSet(set.elements + other))
        case "intersection":
            try arity(name, args, 1)
            let other = RulesSet(try elements(args[0], name))
            return .set(RulesSet(set.elements.filter { other.contains($0) }))
        case "difference":
            try arity(name, args, 1)
            let other = RulesSet(try elements(args[0], name))
            return .set(RulesSet(set.elements.filter { !other.contains($0) }))
        default: throw EvalError("set has no method '\(name)'")
        }
    }

    private func mapMethod(_ m: [String: RulesValue], _ name: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch name {
        case "size": try arity(name, args, 0); return .int(Int64(m.count))
        case "keys": try arity(name, args, 0); return .list(m.keys.sorted(by: utf8Less).map { .string($0) })
        case "values": try arity(name, args, 0); return .list(m.keys.sorted(by: utf8Less).map { m[$0]! })
        case "get":
            try arity(name, args, 2)
            // The key may be a list of keys: a path into nested maps.
            var keys: [String]
            switch args[0] {
            case .string(let k): keys = [k]
            case .list(let items):
                keys = []
                for item in items {
                    guard case .string(let k) = item else { throw EvalError("map.get keys must be strings") }
                    keys.append(k)
                }
            default: throw EvalError("map.get needs a string key or a list of keys")
            }
            var current: RulesValue = .map(m)
            for k in keys {
                switch current {
                case .map(let inner):
                    guard let v = inner[k] else { return args[1] }
                    current = v
                case .partialMap(let inner):
                    guard let v = inner[k] else { return .unknown }
                    current = v
                case .unknown: return .unknown
                default: return args[1]
                }
            }
            return current
        case "diff":
            try arity(name, args, 1)
            guard case .map(let other) = args[0] else { throw EvalError("diff needs a map, not \(args[0].typeName)") }
            return .mapDiff(RulesMapDiff(left: m, right: other))
        default: throw EvalError("map has no method '\(name)'")
        }
    }
}

extension String {
    /// Without leading and trailing whitespace (Foundation-free).
    var trimmingSpaces: String {
        let scalars = Array(unicodeScalars)
        var lo = 0, hi = scalars.count
        while lo < hi, scalars[lo].properties.isWhitespace { lo += 1 }
        while hi > lo, scalars[hi - 1].properties.isWhitespace { hi -= 1 }
        var v = String.UnicodeScalarView()
        v.append(contentsOf: scalars[lo..<hi])
        return String(v)
    }
}
