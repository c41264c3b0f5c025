import Foundation
import HearthCore

extension Value {
    /// The value in Hearth's wire encoding (docs/api.md, Values), as a JSON tree: what `write(to:)` writes.
    var wireJSON: JSON {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d):
            if d.isFinite { return .double(d) }
            return .object([("$double", .string(d.isNaN ? "NaN" : (d > 0 ? "Infinity" : "-Infinity")))])
        case .timestamp(let t): return .object([("$timestamp", .string(t.rfc3339))])
        case .string(let s): return .string(s)
        case .bytes(let b): return .object([("$bytes", .string(Base64.encode(b)))])
        case .reference(let p): return .object([("$ref", .string(p.description))])
        case .geoPoint(let g):
            return .object([("$geo", .object([("latitude", .double(g.latitude)), ("longitude", .double(g.longitude))]))])
        case .array(let items): return .array(items.map(\.wireJSON))
        case .map(let fields): return Wire.map(fields.map { ($0.key, $0.value.wireJSON) })
        }
    }
}

/// Building and reading the wire encoding.
enum Wire {
    /// A map's JSON, escaped as `{"$map": ...}` when it has exactly one key starting with `$`, as the
    /// encoding requires (a bare one would read as a tag).
    static func map(_ pairs: [(String, JSON)]) -> JSON {
        let object = JSON.object(pairs)
        if pairs.count == 1 && pairs[0].0.hasPrefix("$") { return .object([("$map", object)]) }
        return object
    }

    /// A document's fields from the `data` of an answer.
    static func fields(_ json: JSON?, of what: String) throws(HearthClientError) -> [String: Value] {
        guard let json else { return [:] }
        do {
            return try Value.decodeFields(json)
        } catch {
            throw .decoding("the data of \(what) is not in the wire encoding: \(error.message)")
        }
    }

    /// An explicit value of the API given as a Swift value (Firestore's `[String: Any]` habit): strings, numbers,
    /// booleans, `nil`/`NSNull`, `Date`, `Data`, `Timestamp`, `GeoPoint`, `DocumentReference`, `Value`,
    /// `FieldValue`, arrays and string-keyed dictionaries of them, or any `Encodable`.
    static func json(any value: Any?, at field: String) throws(HearthClientError) -> JSON {
        guard let value else { return .null }
        switch value {
        case is NSNull: return .null
        case let v as FieldValue: return v.json
        case let v as Value: return v.wireJSON
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as Int32: return .int(Int64(v))
        case let v as Double: return Value.double(v).wireJSON
        case let v as Float: return Value.double(Double(v)).wireJSON
        case let v as Date: return Value.timestamp(Timestamp(date: v)).wireJSON
        case let v as Timestamp: return Value.timestamp(v).wireJSON
        case let v as Data: return Value.bytes([UInt8](v)).wireJSON
        case let v as GeoPoint: return Value.geoPoint(v).wireJSON
        case let v as DocumentReference: return .object([("$ref", .string(v.path))])
        case let v as [Any]:
            var items: [JSON] = []
            for (k, item) in v.enumerated() { items.append(try json(any: item, at: "\(field)[\(k)]")) }
            return .array(items)
        case let v as [String: Any]:
            return map(try pairs(v, at: field))
        case let v as [Any?]:
            var items: [JSON] = []
            for (k, item) in v.enumerated() { items.append(try json(any: item, at: "\(field)[\(k)]")) }
            return .array(items)
        case let v as [String: Any?]:
            return map(try pairs(v, at: field))
        case let v as any Encodable:
            return try HearthEncoder().encodeValue(v, at: field)
        default:
            throw .encoding("field '\(field)' holds a \(type(of: value)), which has no Hearth value")
        }
    }

    /// A dictionary's pairs, in UTF-8 order of their keys (the canonical order), each value converted.
    static func pairs(_ data: [String: Any?], at field: String?) throws(HearthClientError) -> [(String, JSON)] {
        var out: [(String, JSON)] = []
        for key in data.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out.append((key, try json(any: data[key]!, at: field.map { "\($0).\(key)" } ?? key)))
        }
        return out
    }

    static func pairs(_ data: [String: Any], at field: String?) throws(HearthClientError) -> [(String, JSON)] {
        try pairs(data.mapValues { Optional($0) }, at: field)
    }
}

extension Timestamp {
    /// The timestamp of a date, to the nearest microsecond (the encoding's precision).
    public init(date: Date) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        self.init(microseconds: Int64(micros))
    }

    /// The timestamp as a date.
    public var dateValue: Date { Date(timeIntervalSince1970: Double(microseconds) / 1_000_000) }
}
