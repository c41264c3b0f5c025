import Foundation
import HearthCore

/// A field of a write: a value, or a transform Hearth applies at commit time (docs/api.md, the `$` sentinels).
/// Literals make values: `["title": "Round 1", "open": true, "count": 0, "tags": ["a", "b"]]`.
public struct FieldValue: Sendable {
    indirect enum Kind: Sendable {
        case value(Value)
        case map([String: FieldValue])
        case array([FieldValue])
        case sentinel(String, Value)
    }

    let kind: Kind

    /// Any value.
    public static func value(_ value: Value) -> FieldValue { FieldValue(kind: .value(value)) }
    /// A map whose fields may hold transforms themselves.
    public static func map(_ fields: [String: FieldValue]) -> FieldValue { FieldValue(kind: .map(fields)) }
    /// A timestamp, to the microsecond.
    public static func timestamp(_ date: Date) -> FieldValue {
        .value(.timestamp(Timestamp(microseconds: Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down)))))
    }
    /// Bytes.
    public static func bytes(_ data: Data) -> FieldValue { .value(.bytes(Array(data))) }
    /// A reference to a document; an invalid path throws.
    public static func reference(_ path: String) throws -> FieldValue { .value(.reference(try DocumentPath(path))) }

    /// The commit time, the same for every write of a commit.
    public static var serverTimestamp: FieldValue { FieldValue(kind: .sentinel("$serverTimestamp", .bool(true))) }
    /// Removes the field (in an update, or a set with `merge`).
    public static var delete: FieldValue { FieldValue(kind: .sentinel("$delete", .bool(true))) }
    /// Adds an integer (integer + integer stays an integer, saturating at the 64-bit bounds).
    public static func increment(_ n: Int) -> FieldValue { FieldValue(kind: .sentinel("$increment", .int(Int64(n)))) }
    /// Adds a double.
    public static func increment(_ n: Double) -> FieldValue { FieldValue(kind: .sentinel("$increment", .double(n))) }
    /// The larger of the field and `n`.
    public static func maximum(_ n: Value) -> FieldValue { FieldValue(kind: .sentinel("$maximum", n)) }
    /// The smaller of the field and `n`.
    public static func minimum(_ n: Value) -> FieldValue { FieldValue(kind: .sentinel("$minimum", n)) }
    /// Appends the elements not already present.
    public static func arrayUnion(_ items: [Value]) -> FieldValue { FieldValue(kind: .sentinel("$arrayUnion", .array(items))) }
    /// Removes every equal element.
    public static func arrayRemove(_ items: [Value]) -> FieldValue { FieldValue(kind: .sentinel("$arrayRemove", .array(items))) }

    func write(to w: inout JSONWriter) {
        switch kind {
        case .value(let value): value.write(to: &w)
        case .map(let fields):
            // A map with one `$` key is escaped as the wire format asks, so it is never read as a sentinel.
            let escaped = fields.count == 1 && fields.keys.first!.hasPrefix("$")
            if escaped { w.raw("{\"$map\":") }
            Self.write(fields, to: &w)
            if escaped { w.raw("}") }
        case .array(let items):
            w.raw("[")
            for (i, item) in items.enumerated() {
                if i > 0 { w.raw(",") }
                item.write(to: &w)
            }
            w.raw("]")
        case .sentinel(let name, let operand):
            w.raw("{\"\(name)\":")
            operand.write(to: &w)
            w.raw("}")
        }
    }

    /// Writes fields as a JSON object, keys in order.
    static func write(_ fields: [String: FieldValue], to w: inout JSONWriter) {
        w.raw("{")
        for (i, key) in fields.keys.sorted().enumerated() {
            if i > 0 { w.raw(",") }
            w.string(key)
            w.raw(":")
            fields[key]!.write(to: &w)
        }
        w.raw("}")
    }
}

extension FieldValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
                      ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
                      ExpressibleByDictionaryLiteral {
    /// A string.
    public init(stringLiteral value: String) { kind = .value(.string(value)) }
    /// An integer.
    public init(integerLiteral value: Int64) { kind = .value(.int(value)) }
    /// A double.
    public init(floatLiteral value: Double) { kind = .value(.double(value)) }
    /// A boolean.
    public init(booleanLiteral value: Bool) { kind = .value(.bool(value)) }
    /// Null.
    public init(nilLiteral: ()) { kind = .value(.null) }
    /// An array.
    public init(arrayLiteral elements: FieldValue...) { kind = .array(elements) }
    /// A map (a key given twice keeps the last).
    public init(dictionaryLiteral elements: (String, FieldValue)...) {
        kind = .map(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
