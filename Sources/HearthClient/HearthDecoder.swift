import Foundation
import HearthCore

/// Decodes Hearth values into `Decodable` types, the inverse of `HearthEncoder`: timestamps into `Date` or
/// `Timestamp`, bytes into `Data`, references into `DocumentReference`, any value into `Value`; integers into
/// any integer type they fit and into `Double`; a `@DocumentID` property gets the document's id.
struct HearthDecoder {
    static let documentPathKey = CodingUserInfoKey(rawValue: "hearth.documentPath")!
    static let hearthKey = CodingUserInfoKey(rawValue: "hearth.client")!

    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(documentPath: String?, hearth: Hearth?) {
        if let documentPath { userInfo[Self.documentPathKey] = documentPath }
        if let hearth { userInfo[Self.hearthKey] = hearth }
    }

    func decode<T: Decodable>(_ type: T.Type, from value: Value) throws(HearthClientError) -> T {
        do {
            return try Node(value: value, codingPath: [], userInfo: userInfo).unbox(type)
        } catch let error as HearthClientError {
            throw error
        } catch let error as DecodingError {
            let (context, what): (DecodingError.Context, String) = switch error {
            case .typeMismatch(_, let c): (c, "type mismatch")
            case .valueNotFound(_, let c): (c, "value not found")
            case .keyNotFound(let key, let c): (c, "no field '\(key.stringValue)'")
            case .dataCorrupted(let c): (c, "bad value")
            @unknown default: (.init(codingPath: [], debugDescription: "\(error)"), "error")
            }
            let place = HearthEncoder.Node.describe(context.codingPath, under: nil)
            let document = (userInfo[Self.documentPathKey] as? String).map { " of \($0)" } ?? ""
            throw .decoding("cannot decode \(T.self)\(document)\(place.map { " at '\($0)'" } ?? ""): \(what): \(context.debugDescription)")
        } catch {
            throw .decoding("cannot decode \(T.self): \(error)")
        }
    }

    struct Node: Decoder {
        let value: Value
        let codingPath: [any CodingKey]
        let userInfo: [CodingUserInfoKey: Any]

        func child(_ value: Value, _ key: any CodingKey) -> Node {
            Node(value: value, codingPath: codingPath + [key], userInfo: userInfo)
        }

        func mismatch<T>(_ type: T.Type) -> DecodingError {
            .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(type), found a \(value.typeName)"))
        }

        func unbox<T: Decodable>(_ type: T.Type) throws -> T {
            switch type {
            case is Date.Type:
                guard case .timestamp(let t) = value else { throw mismatch(type) }
                return t.dateValue as! T
            case is Timestamp.Type:
                guard case .timestamp(let t) = value else { throw mismatch(type) }
                return t as! T
            case is Data.Type:
                guard case .bytes(let b) = value else { throw mismatch(type) }
                return Data(b) as! T
            case is GeoPoint.Type:
                guard case .geoPoint(let g) = value else { throw mismatch(type) }
                return g as! T
            case is Value.Type:
                return value as! T
            case is DocumentReference.Type:
                guard case .reference(let p) = value else { throw mismatch(type) }
                guard let hearth = userInfo[HearthDecoder.hearthKey] as? Hearth else {
                    throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "a reference needs the client that read it"))
                }
                return hearth.document(p.description) as! T
            case is URL.Type:
                guard case .string(let s) = value, let url = URL(string: s) else { throw mismatch(type) }
                return url as! T
            default:
                return try T(from: self)
            }
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            switch value {
            case .map(let fields):
                return KeyedDecodingContainer(KeyedContainer<Key>(node: self, fields: fields))
            case .geoPoint(let g):
                // A geopoint also reads into a type of yours with `latitude` and `longitude`.
                let fields: [String: Value] = ["latitude": .double(g.latitude), "longitude": .double(g.longitude)]
                return KeyedDecodingContainer(KeyedContainer<Key>(node: self, fields: fields))
            default:
                throw mismatch([String: Value].self)
            }
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard case .array(let items) = value else { throw mismatch([Value].self) }
            return UnkeyedContainer(node: self, items: items)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(node: self) }

        func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            switch value {
            case .int(let i):
                if let v = T(exactly: i) { return v }
            case .double(let d):
                if let v = T(exactly: d) { return v }
            default: throw mismatch(type)
            }
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(value.wireText) does not fit in \(type)"))
        }

        func double() throws -> Double {
            switch value {
            case .double(let d): return d
            case .int(let i): return Double(i)
            default: throw mismatch(Double.self)
            }
        }

        /// A string, or a reference's path (read without the client a `DocumentReference` needs).
        func string() throws -> String {
            switch value {
            case .string(let s): return s
            case .reference(let path): return path.description
            default: throw mismatch(String.self)
            }
        }

        func bool() throws -> Bool {
            guard case .bool(let b) = value else { throw mismatch(Bool.self) }
            return b
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let node: Node
        let fields: [String: Value]
        var codingPath: [any CodingKey] { node.codingPath }
        var allKeys: [Key] { fields.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

        func child(_ key: Key) throws -> Node {
            guard let value = fields[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "the document has no field '\(key.stringValue)'"))
            }
            return node.child(value, key)
        }

        func decodeNil(forKey key: Key) throws -> Bool { fields[key.stringValue].map { $0 == .null } ?? true }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).bool() }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).string() }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).double() }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try child(key).double()) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).integer(type) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).integer(type) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).integer(type) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).integer(type) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).integer(type) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).integer(type) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).integer(type) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).integer(type) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).integer(type) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).integer(type) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).unbox(type) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try child(key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }

        func superDecoder() throws -> any Decoder { node.child(fields["super"] ?? .null, HearthEncoder.IndexKey(0)) }

        /// A missing field decodes as null here, so a wrapper (`@DocumentID`) can decide what that means.
        func superDecoder(forKey key: Key) throws -> any Decoder { node.child(fields[key.stringValue] ?? .null, key) }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let node: Node
        let items: [Value]
        var currentIndex = 0
        var codingPath: [any CodingKey] { node.codingPath }
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        init(node: Node, items: [Value]) {
            self.node = node
            self.items = items
        }

        mutating func next() throws -> Node {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(Value.self, .init(codingPath: codingPath, debugDescription: "the array has no element \(currentIndex)"))
            }
            defer { currentIndex += 1 }
            return node.child(items[currentIndex], HearthEncoder.IndexKey(currentIndex))
        }

        mutating func decodeNil() throws -> Bool {
            if !isAtEnd, items[currentIndex] == .null { currentIndex += 1; return true }
            return false
        }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try next().bool() }
        mutating func decode(_ type: String.Type) throws -> String { try next().string() }
        mutating func decode(_ type: Double.Type) throws -> Double { try next().double() }
        mutating func decode(_ type: Float.Type) throws -> Float { Float(try next().double()) }
        mutating func decode(_ type: Int.Type) throws -> Int { try next().integer(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().integer(type) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().unbox(type) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

        mutating func superDecoder() throws -> any Decoder { try next() }
    }

    struct SingleContainer: SingleValueDecodingContainer {
        let node: Node
        var codingPath: [any CodingKey] { node.codingPath }

        func decodeNil() -> Bool { node.value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try node.bool() }
        func decode(_ type: String.Type) throws -> String { try node.string() }
        func decode(_ type: Double.Type) throws -> Double { try node.double() }
        func decode(_ type: Float.Type) throws -> Float { Float(try node.double()) }
        func decode(_ type: Int.Type) throws -> Int { try node.integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try node.integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try node.integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try node.integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try node.integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try node.integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try node.integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try node.integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try node.integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try node.integer(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try node.unbox(type) }
    }
}

// Codable for the value types the client's models hold. Hearth's coders take them by type first; these
// conformances are what other coders (a `JSONEncoder` of the model, say) see.
extension Timestamp: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let t = Timestamp(rfc3339: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not an RFC 3339 timestamp"))
        }
        self = t
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rfc3339)
    }
}

extension GeoPoint: Codable {
    enum CodingKeys: String, CodingKey { case latitude, longitude }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(latitude: try c.decode(Double.self, forKey: .latitude), longitude: try c.decode(Double.self, forKey: .longitude))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(latitude, forKey: .latitude)
        try c.encode(longitude, forKey: .longitude)
    }
}

extension Value: Codable {
    /// Outside Hearth's coders a value travels as its wire JSON text.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try Value(wireText: text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireText)
    }
}
