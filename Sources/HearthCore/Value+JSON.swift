/// The `$` tags of the wire encoding (docs/api.md, Values).
enum WireTag {
    static let valueTags: Set<String> = ["$int", "$double", "$timestamp", "$bytes", "$ref", "$geo", "$map"]
    static let sentinelTags: Set<String> = [
        "$serverTimestamp", "$increment", "$maximum", "$minimum", "$arrayUnion", "$arrayRemove", "$delete",
    ]
}

extension Value {
    /// Decodes a value from its wire JSON. `field` names where it sits, for error messages.
    /// `depth` counts the maps and arrays around it.
    public init(wire json: JSON, field: String = "value", depth: Int = 0) throws(HearthError) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .array(let items):
            try Value.checkDepth(depth + 1, field)
            var out: [Value] = []
            out.reserveCapacity(items.count)
            for (k, item) in items.enumerated() {
                if case .object(let pairs) = item, pairs.count == 1, WireTag.sentinelTags.contains(pairs[0].0) {
                    throw .invalidArgument("\(pairs[0].0) is not allowed inside an array (at \(field)[\(k)])")
                }
                out.append(try Value(wire: item, field: "\(field)[\(k)]", depth: depth + 1))
            }
            self = .array(out)
        case .object(let pairs):
            if pairs.count == 1, pairs[0].0.hasPrefix("$") {
                self = try Value.decodeTagged(pairs[0].0, pairs[0].1, field: field, depth: depth)
                return
            }
            try Value.checkDepth(depth + 1, field)
            self = .map(try Value.decodeMap(pairs, field: field, depth: depth + 1))
        }
    }

    /// `depth` counts the maps and arrays entered, the one being entered included; its contents sit one
    /// level deeper, and no field may sit deeper than `Limits.maxDepth` levels (a top-level field is level 1).
    static func checkDepth(_ depth: Int, _ field: String) throws(HearthError) {
        if depth >= Limits.maxDepth {
            throw .invalidArgument("\(field) is nested more than \(Limits.maxDepth) levels deep")
        }
    }

    static func decodeMap(_ pairs: [(String, JSON)], field: String, depth: Int) throws(HearthError) -> [String: Value] {
        var out: [String: Value] = [:]
        out.reserveCapacity(pairs.count)
        for (key, item) in pairs {
            out[key] = try decodeEntry(key, item, field: field == "" ? key : "\(field).\(key)", depth: depth)
        }
        return out
    }

    /// One entry of a map: its name checked, no sentinel as its value, the value decoded.
    static func decodeEntry(_ key: String, _ item: JSON, field child: String, depth: Int) throws(HearthError) -> Value {
        try validateFieldName(key, at: child)
        if case .object(let p) = item, p.count == 1, WireTag.sentinelTags.contains(p[0].0) {
            throw .invalidArgument("\(p[0].0) is only allowed in the data of a write (at \(child))")
        }
        return try Value(wire: item, field: child, depth: depth)
    }

    static func decodeTagged(_ tag: String, _ body: JSON, field: String, depth: Int) throws(HearthError) -> Value {
        func bad(_ what: String) -> HearthError { .invalidArgument("\(field): \(tag) \(what)") }
        switch tag {
        case "$int":
            switch body {
            case .int(let i): return .int(i)
            case .string(let s):
                guard let i = Int64(s) else { throw bad("must hold a 64-bit integer, got \"\(s)\"") }
                return .int(i)
            default: throw bad("must hold a decimal string, got \(body.kind)")
            }
        case "$double":
            switch body {
            case .double(let d): return .double(d)
            case .int(let i): return .double(Double(i))
            case .string(let s):
                switch s {
                case "NaN": return .double(.nan)
                case "Infinity": return .double(.infinity)
                case "-Infinity": return .double(-.infinity)
                default:
                    guard let d = Double(s), s.utf8.allSatisfy({ c in c != UInt8(ascii: "n") && c != UInt8(ascii: "N") }) else {
                        throw bad("must be a number, \"NaN\", \"Infinity\" or \"-Infinity\", got \"\(s)\"")
                    }
                    return .double(d)
                }
            default: throw bad("must hold a number or a string, got \(body.kind)")
            }
        case "$timestamp":
            guard case .string(let s) = body else { throw bad("must hold an RFC 3339 string, got \(body.kind)") }
            guard let t = Timestamp(rfc3339: s) else {
                throw bad("\"\(s)\" is not an RFC 3339 timestamp between 0001-01-01 and 9999-12-31")
            }
            return .timestamp(t)
        case "$bytes":
            guard case .string(let s) = body else { throw bad("must hold a base64 string, got \(body.kind)") }
            guard let data = Base64.decode(s) else { throw bad("is not valid base64") }
            return .bytes(data)
        case "$ref":
            guard case .string(let s) = body else { throw bad("must hold a document path, got \(body.kind)") }
            do { return .reference(try DocumentPath(s)) } catch { throw bad("is not a document path: \(error.message)") }
        case "$geo":
            guard case .object = body, case let lat?? = body["latitude"].map(Value.number),
                  case let lng?? = body["longitude"].map(Value.number),
                  body.objectCount == 2
            else { throw bad("must hold {\"latitude\": number, \"longitude\": number}") }
            guard (-90.0...90.0).contains(lat) else { throw bad("latitude \(lat) is outside [-90, 90]") }
            guard (-180.0...180.0).contains(lng) else { throw bad("longitude \(lng) is outside [-180, 180]") }
            return .geoPoint(GeoPoint(latitude: lat, longitude: lng))
        case "$map":
            guard case .object(let pairs) = body else { throw bad("must hold an object, got \(body.kind)") }
            try checkDepth(depth + 1, field)
            return .map(try decodeMap(pairs, field: field, depth: depth + 1))
        default:
            if WireTag.sentinelTags.contains(tag) {
                throw .invalidArgument("\(tag) is only allowed in the data of a write (at \(field))")
            }
            throw .invalidArgument(
                "\(field): unknown tag \(tag); a one-key object whose key starts with '$' must be one of "
                    + "$int, $double, $timestamp, $bytes, $ref, $geo, $map (wrap a plain map in {\"$map\": ...})")
        }
    }

    static func number(_ json: JSON) -> Double? {
        switch json {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// Decodes a document's fields from a JSON object (no sentinels).
    public static func decodeFields(_ json: JSON) throws(HearthError) -> [String: Value] {
        guard case .object(let pairs) = json else {
            throw .invalidArgument("document data must be a JSON object, got \(json.kind)")
        }
        return try decodeMap(pairs, field: "", depth: 0)
    }

    /// Decodes one field of a document from its wire JSON: a value that `JSON.objectMembers` found in the
    /// document's stored fields. Gives what `decodeFields` gives under that key.
    public static func decodeField(_ key: String, _ bytes: ArraySlice<UInt8>) throws(HearthError) -> Value {
        try decodeEntry(key, JSON.parse(bytes), field: key, depth: 0)
    }

    /// Writes the value's wire JSON.
    public func write(to w: inout JSONWriter) {
        switch self {
        case .null: w.raw("null")
        case .bool(let b): w.raw(b ? "true" : "false")
        case .int(let i): w.raw(String(i))
        case .double(let d):
            if d.isFinite {
                w.writeDouble(d)
            } else {
                w.raw(d.isNaN ? "{\"$double\":\"NaN\"}" : (d > 0 ? "{\"$double\":\"Infinity\"}" : "{\"$double\":\"-Infinity\"}"))
            }
        case .timestamp(let t): w.raw("{\"$timestamp\":\""); w.rfc3339(t); w.raw("\"}")
        case .string(let s): w.string(s)
        case .bytes(let data): w.raw("{\"$bytes\":\""); w.raw(Base64.encode(data)); w.raw("\"}")
        case .reference(let p): w.raw("{\"$ref\":"); w.string(p.description); w.raw("}")
        case .geoPoint(let g):
            w.raw("{\"$geo\":{\"latitude\":"); w.writeDouble(g.latitude)
            w.raw(",\"longitude\":"); w.writeDouble(g.longitude); w.raw("}}")
        case .array(let items):
            w.bytes.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { w.bytes.append(UInt8(ascii: ",")) }
                item.write(to: &w)
            }
            w.bytes.append(UInt8(ascii: "]"))
        case .map(let fields):
            let escape = fields.count == 1 && fields.keys.first!.hasPrefix("$")
            if escape { w.raw("{\"$map\":") }
            Value.writeFields(fields, to: &w)
            if escape { w.raw("}") }
        }
    }

    /// Writes a field map as a JSON object with keys in UTF-8 order (a canonical form).
    public static func writeFields(_ fields: [String: Value], to w: inout JSONWriter) {
        w.bytes.append(UInt8(ascii: "{"))
        for (k, key) in fields.keys.sorted(by: utf8Less).enumerated() {
            if k > 0 { w.bytes.append(UInt8(ascii: ",")) }
            w.string(key)
            w.bytes.append(UInt8(ascii: ":"))
            fields[key]!.write(to: &w)
        }
        w.bytes.append(UInt8(ascii: "}"))
    }

    /// The value's wire JSON as bytes.
    public var wireBytes: [UInt8] {
        var w = JSONWriter()
        write(to: &w)
        return w.bytes
    }

    /// The value's wire JSON as text.
    public var wireText: String { String(decoding: wireBytes, as: UTF8.self) }

    /// Parses wire JSON text into a value.
    public init(wireText text: String) throws(HearthError) {
        self = try Value(wire: JSON.parse(text))
    }

    /// Encodes a field map as canonical wire JSON bytes.
    public static func encodeFields(_ fields: [String: Value]) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        writeFields(fields, to: &w)
        return w.bytes
    }
}

extension JSON {
    var objectCount: Int {
        if case .object(let p) = self { return p.count }
        return 0
    }
}

/// Checks a field name: non-empty and not `__.*__`.
public func validateFieldName(_ name: String, at field: String) throws(HearthError) {
    if name.isEmpty { throw .invalidArgument("empty field name at '\(field)'") }
    let n = name.utf8.count
    if n >= 4, name.hasPrefix("__"), name.hasSuffix("__") {
        throw .invalidArgument("field name '\(name)' is reserved: names matching __.*__ are not allowed")
    }
    if n > Limits.maxFieldPathBytes {
        throw .invalidArgument("field name at '\(field.prefix(64))…' is \(n) bytes; the limit is \(Limits.maxFieldPathBytes)")
    }
}
