import Foundation
import HearthCore

/// A field's value in a write: any value, or a write sentinel (docs/api.md, Values), a field transform the
/// server applies in the commit, written where a value would be (never inside arrays, never in queries),
/// in a dictionary or as a property of an `Encodable` document. Literals make values:
/// `["title": "Round 1", "open": true, "count": 0, "tags": ["a", "b"], "at": .serverTimestamp]`.
public struct FieldValue: Sendable, Equatable, Codable {
    // `HearthCore.Value` in full inside the type: its dictionary literals name their values `Value`.
    let json: JSON

    /// Any value.
    public static func value(_ value: HearthCore.Value) -> FieldValue { FieldValue(json: value.wireJSON) }
    /// A map whose fields may hold sentinels themselves.
    public static func map(_ fields: [String: FieldValue]) -> FieldValue { FieldValue(json: Wire.map(pairs(fields))) }
    /// A timestamp, to the microsecond.
    public static func timestamp(_ date: Date) -> FieldValue { .value(.timestamp(Timestamp(date: date))) }
    /// Bytes.
    public static func bytes(_ data: Data) -> FieldValue { .value(.bytes([UInt8](data))) }
    /// A reference to a document; a path that is not a document's throws.
    public static func reference(_ path: String) throws -> FieldValue { .value(.reference(try DocumentPath(path))) }

    /// The commit time (the same for every write of a commit). `FieldValue.serverTimestamp()`, Firestore's
    /// spelling, is the same value (see `callAsFunction`).
    public static var serverTimestamp: FieldValue { FieldValue(json: .object([("$serverTimestamp", .bool(true))])) }
    /// Removes the field (in `updateData`, or `setData` with a merge); `FieldValue.delete()` is the same value.
    public static var delete: FieldValue { FieldValue(json: .object([("$delete", .bool(true))])) }
    /// The value itself: lets `serverTimestamp()` and `delete()` be written with Firestore's parentheses.
    public func callAsFunction() -> FieldValue { self }

    /// Adds to the stored number (integer + integer stays an integer, saturating).
    public static func increment(_ n: Int) -> FieldValue { increment(Int64(n)) }
    /// Adds to the stored number (integer + integer stays an integer, saturating).
    public static func increment(_ n: Int64) -> FieldValue { FieldValue(json: .object([("$increment", .int(n))])) }
    /// Adds to the stored number (the result is a double).
    public static func increment(_ n: Double) -> FieldValue { FieldValue(json: .object([("$increment", HearthCore.Value.double(n).wireJSON)])) }
    /// The larger of the stored number and `n`.
    public static func maximum(_ n: Int) -> FieldValue { maximum(Int64(n)) }
    /// The larger of the stored number and `n`.
    public static func maximum(_ n: Int64) -> FieldValue { maximum(HearthCore.Value.int(n)) }
    /// The larger of the stored number and `n`.
    public static func maximum(_ n: Double) -> FieldValue { maximum(HearthCore.Value.double(n)) }
    /// The larger of the stored value and `n`.
    public static func maximum(_ n: HearthCore.Value) -> FieldValue { FieldValue(json: .object([("$maximum", n.wireJSON)])) }
    /// The smaller of the stored number and `n`.
    public static func minimum(_ n: Int) -> FieldValue { minimum(Int64(n)) }
    /// The smaller of the stored number and `n`.
    public static func minimum(_ n: Int64) -> FieldValue { minimum(HearthCore.Value.int(n)) }
    /// The smaller of the stored number and `n`.
    public static func minimum(_ n: Double) -> FieldValue { minimum(HearthCore.Value.double(n)) }
    /// The smaller of the stored value and `n`.
    public static func minimum(_ n: HearthCore.Value) -> FieldValue { FieldValue(json: .object([("$minimum", n.wireJSON)])) }
    /// Appends the elements not already in the stored array.
    public static func arrayUnion(_ elements: [HearthCore.Value]) -> FieldValue {
        FieldValue(json: .object([("$arrayUnion", .array(elements.map(\.wireJSON)))]))
    }
    /// Removes every element equal to one of these from the stored array.
    public static func arrayRemove(_ elements: [HearthCore.Value]) -> FieldValue {
        FieldValue(json: .object([("$arrayRemove", .array(elements.map(\.wireJSON)))]))
    }

    /// Fields as a write's `data`, in UTF-8 order of their keys (the canonical order).
    package static func pairs(_ fields: [String: FieldValue]) -> [(String, JSON)] {
        fields.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { ($0, fields[$0]!.json) }
    }

    /// Sentinels are written, never read: decoding one is an error.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                debugDescription: "a FieldValue is a write sentinel and is never read back"))
    }

    init(json: JSON) { self.json = json }

    public func encode(to encoder: any Encoder) throws {
        guard let encoder = encoder as? HearthEncoder.Node else {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                         debugDescription: "a FieldValue encodes only into a Hearth document"))
        }
        encoder.leaf = json
    }

    public static func == (a: FieldValue, b: FieldValue) -> Bool { a.json == b.json }
}

extension FieldValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
                      ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
                      ExpressibleByDictionaryLiteral {
    /// A string.
    public init(stringLiteral value: String) { json = .string(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { json = .int(value) }
    /// A double.
    public init(floatLiteral value: Double) { json = HearthCore.Value.double(value).wireJSON }
    /// A boolean.
    public init(booleanLiteral value: Bool) { json = .bool(value) }
    /// Null.
    public init(nilLiteral: ()) { json = .null }
    /// An array.
    public init(arrayLiteral elements: FieldValue...) { json = .array(elements.map(\.json)) }
    /// A map (a key given twice keeps the last).
    public init(dictionaryLiteral elements: (String, FieldValue)...) {
        json = Wire.map(Self.pairs(Dictionary(elements, uniquingKeysWith: { _, last in last })))
    }
}

/// A document's id, filled in when a document is read into a `Decodable` type and never written (Firestore's
/// `@DocumentID`): `@DocumentID var id: String?`.
@propertyWrapper
public struct DocumentID: Sendable, Codable, Hashable {
    public var wrappedValue: String?

    public init(wrappedValue: String?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        wrappedValue = (decoder.userInfo[HearthDecoder.documentPathKey] as? String)?.split(separator: "/").last.map(String.init)
    }

    /// Written by the document's path, never as a field: encoding skips it.
    public func encode(to encoder: any Encoder) throws {}
}

/// A timestamp the server sets when the document is written with the property `nil` (Firestore's
/// `@ServerTimestamp`): `@ServerTimestamp var createdAt: Date?` (or `Timestamp?`).
@propertyWrapper
public struct ServerTimestamp<Wrapped: ServerTimestampWrappable>: Sendable, Codable, Equatable {
    public var wrappedValue: Wrapped?

    public init(wrappedValue: Wrapped?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Timestamp.self).as(Wrapped.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue.timestamp) } else { try container.encode(FieldValue.serverTimestamp) }
    }
}

/// What `@ServerTimestamp` may wrap: `Date` or `Timestamp`.
public protocol ServerTimestampWrappable: Sendable, Equatable {
    var timestamp: Timestamp { get }
    init(timestamp: Timestamp)
}

extension Date: ServerTimestampWrappable {
    public var timestamp: Timestamp { Timestamp(date: self) }
    public init(timestamp: Timestamp) { self = timestamp.dateValue }
}

extension Timestamp: ServerTimestampWrappable {
    public var timestamp: Timestamp { self }
    public init(timestamp: Timestamp) { self = timestamp }
}

extension Timestamp {
    fileprivate func `as`<T: ServerTimestampWrappable>(_ type: T.Type) -> T { T(timestamp: self) }
}

// The synthesized `Codable` of a model calls `decode(_:forKey:)` for a wrapped property; these overloads let a
// document without the field decode (the id comes from the path; a missing timestamp is nil), as Firestore's do.
extension KeyedDecodingContainer {
    public func decode(_ type: DocumentID.Type, forKey key: Key) throws -> DocumentID {
        try DocumentID(from: superDecoder(forKey: key))
    }

    public func decode<T>(_ type: ServerTimestamp<T>.Type, forKey key: Key) throws -> ServerTimestamp<T> {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}

extension KeyedEncodingContainer {
    /// An id is the document's path, never a field.
    public mutating func encode(_ value: DocumentID, forKey key: Key) throws {}
}
