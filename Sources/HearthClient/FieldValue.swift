import Foundation
import HearthCore

/// A write sentinel (docs/api.md, Values): a field transform the server applies in the commit, written where a
/// value would be, in the data of a write (never inside arrays, never in queries), either in a dictionary or as
/// a property of an `Encodable` document.
public struct FieldValue: Sendable, Equatable, Codable {
    let json: JSON

    /// The commit time (the same for every write of a commit).
    public static func serverTimestamp() -> FieldValue { FieldValue(json: .object([("$serverTimestamp", .bool(true))])) }
    /// Adds to the stored number (integer + integer stays an integer, saturating).
    public static func increment(_ n: Int) -> FieldValue { increment(Int64(n)) }
    /// Adds to the stored number (integer + integer stays an integer, saturating).
    public static func increment(_ n: Int64) -> FieldValue { FieldValue(json: .object([("$increment", .int(n))])) }
    /// Adds to the stored number (the result is a double).
    public static func increment(_ n: Double) -> FieldValue { FieldValue(json: .object([("$increment", Value.double(n).wireJSON)])) }
    /// The larger of the stored number and `n`.
    public static func maximum(_ n: Int) -> FieldValue { maximum(Int64(n)) }
    /// The larger of the stored number and `n`.
    public static func maximum(_ n: Int64) -> FieldValue { FieldValue(json: .object([("$maximum", .int(n))])) }
    /// The larger of the stored number and `n`.
    public static func maximum(_ n: Double) -> FieldValue { FieldValue(json: .object([("$maximum", Value.double(n).wireJSON)])) }
    /// The smaller of the stored number and `n`.
    public static func minimum(_ n: Int) -> FieldValue { minimum(Int64(n)) }
    /// The smaller of the stored number and `n`.
    public static func minimum(_ n: Int64) -> FieldValue { FieldValue(json: .object([("$minimum", .int(n))])) }
    /// The smaller of the stored number and `n`.
    public static func minimum(_ n: Double) -> FieldValue { FieldValue(json: .object([("$minimum", Value.double(n).wireJSON)])) }
    /// Appends the elements not already in the stored array.
    public static func arrayUnion(_ elements: [Value]) -> FieldValue {
        FieldValue(json: .object([("$arrayUnion", .array(elements.map(\.wireJSON)))]))
    }
    /// Removes every element equal to one of these from the stored array.
    public static func arrayRemove(_ elements: [Value]) -> FieldValue {
        FieldValue(json: .object([("$arrayRemove", .array(elements.map(\.wireJSON)))]))
    }
    /// Removes the field (in `updateData`, or `setData` with a merge).
    public static func delete() -> FieldValue { FieldValue(json: .object([("$delete", .bool(true))])) }

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
        if let wrappedValue { try container.encode(wrappedValue.timestamp) } else { try container.encode(FieldValue.serverTimestamp()) }
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
