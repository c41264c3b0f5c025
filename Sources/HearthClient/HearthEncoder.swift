import Foundation
import HearthCore

/// Encodes `Encodable` values into Hearth's wire encoding, as Firestore's encoder does for its values:
/// `Date` and `Timestamp` become timestamps, `Data` bytes, `GeoPoint` geopoints, `DocumentReference`
/// references, integers integers and `Double`/`Float` doubles; `FieldValue` writes its sentinel; a
/// `@DocumentID` property is skipped; optionals that are nil are left out.
struct HearthEncoder {
    /// A whole document: the value must encode as a keyed container (a map of fields).
    func encodeDocument(_ value: some Encodable) throws(HearthClientError) -> [(String, JSON)] {
        let node = try encodeNode(value, at: nil)
        switch node.storage {
        case .empty where !Self.isTagged(value): return []
        case .keyed(let fields) where !Self.isTagged(value):
            let keys = fields.order.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            return keys.map { ($0, fields.nodes[$0]!.json) }
        default:
            throw .encoding("a document must encode as a map of fields (a keyed container), but \(type(of: value)) encodes as \(node.json.kind)")
        }
    }

    /// Values whose wire form is a tagged object, not a map of fields.
    private static func isTagged(_ value: Any) -> Bool {
        value is Date || value is Timestamp || value is Data || value is GeoPoint || value is DocumentReference
            || value is FieldValue || value is Value
    }

    /// One value (a field's, or a query operand).
    func encodeValue(_ value: any Encodable, at field: String?) throws(HearthClientError) -> JSON {
        try encodeNode(value, at: field).json
    }

    private func encodeNode(_ value: any Encodable, at field: String?) throws(HearthClientError) -> Node {
        let node = Node(codingPath: [])
        do {
            try node.box(value)
        } catch let error as HearthClientError {
            throw error
        } catch let EncodingError.invalidValue(_, context) {
            let place = Node.describe(context.codingPath, under: field)
            throw .encoding("\(place.map { "field '\($0)': " } ?? "")\(context.debugDescription)")
        } catch {
            throw .encoding("\(field.map { "field '\($0)': " } ?? "")\(error)")
        }
        return node
    }

    /// An encoder over one value of the tree being built.
    final class Node: Encoder {
        enum Storage {
            case empty
            case leaf(JSON)
            case keyed(Fields)
            case unkeyed(Items)
        }

        final class Fields {
            var order: [String] = []
            var nodes: [String: Node] = [:]
        }

        final class Items {
            var nodes: [Node] = []
        }

        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        var storage: Storage = .empty

        init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

        /// A value written whole (sentinels, tagged values).
        var leaf: JSON? {
            get { if case .leaf(let j) = storage { return j } else { return nil } }
            set { storage = newValue.map { .leaf($0) } ?? .empty }
        }

        var isLeaf: Bool { if case .leaf = storage { return true } else { return false } }

        var json: JSON {
            switch storage {
            case .empty: return .object([])
            case .leaf(let j): return j
            case .keyed(let f):
                let keys = f.order.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                return Wire.map(keys.map { ($0, f.nodes[$0]!.json) })
            case .unkeyed(let i): return .array(i.nodes.map(\.json))
            }
        }

        /// Encodes a value into this node, taking the types with a Hearth value of their own first.
        func box(_ value: any Encodable) throws {
            switch value {
            case let v as Date: leaf = Value.timestamp(Timestamp(date: v)).wireJSON
            case let v as Timestamp: leaf = Value.timestamp(v).wireJSON
            case let v as Data: leaf = Value.bytes([UInt8](v)).wireJSON
            case let v as GeoPoint: leaf = Value.geoPoint(v).wireJSON
            case let v as DocumentReference: leaf = .object([("$ref", .string(v.path))])
            case let v as Value: leaf = v.wireJSON
            case let v as URL: leaf = .string(v.absoluteString)
            case let v as Decimal: leaf = Value.double(NSDecimalNumber(decimal: v).doubleValue).wireJSON
            default: try value.encode(to: self)
            }
        }

        static func describe(_ path: [any CodingKey], under field: String?) -> String? {
            var text = field ?? ""
            for key in path {
                if let i = key.intValue, key.stringValue == "Index \(i)" || key.stringValue == String(i) {
                    text += "[\(i)]"
                } else {
                    text += text.isEmpty ? key.stringValue : "." + key.stringValue
                }
            }
            return text.isEmpty ? nil : text
        }

        func fields() -> Fields {
            if case .keyed(let f) = storage { return f }
            let f = Fields()
            storage = .keyed(f)
            return f
        }

        func items() -> Items {
            if case .unkeyed(let i) = storage { return i }
            let i = Items()
            storage = .unkeyed(i)
            return i
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyedContainer<Key>(node: self, fields: fields()))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedContainer(node: self, items: items()) }

        func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(node: self) }

        func child(_ key: any CodingKey) -> Node { Node(codingPath: codingPath + [key]) }

        func integer<T: BinaryInteger>(_ v: T) throws -> JSON {
            guard let i = Int64(exactly: v) else {
                throw EncodingError.invalidValue(v, .init(codingPath: codingPath,
                    debugDescription: "\(T.self) \(v) does not fit in a 64-bit signed integer, Hearth's integer"))
            }
            return .int(i)
        }
    }

    struct IndexKey: CodingKey {
        var intValue: Int?
        var stringValue: String { "Index \(intValue!)" }
        init(_ i: Int) { intValue = i }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let fields: Fields
        var codingPath: [any CodingKey] { node.codingPath }

        typealias Fields = Node.Fields

        func put(_ key: Key, _ json: JSON) {
            let child = node.child(key)
            child.leaf = json
            set(key, child)
        }

        func set(_ key: Key, _ child: Node) {
            if fields.nodes[key.stringValue] == nil { fields.order.append(key.stringValue) }
            fields.nodes[key.stringValue] = child
        }

        mutating func encodeNil(forKey key: Key) throws { put(key, .null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { put(key, .bool(value)) }
        mutating func encode(_ value: String, forKey key: Key) throws { put(key, .string(value)) }
        mutating func encode(_ value: Double, forKey key: Key) throws { put(key, Value.double(value).wireJSON) }
        mutating func encode(_ value: Float, forKey key: Key) throws { put(key, Value.double(Double(value)).wireJSON) }
        mutating func encode(_ value: Int, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { put(key, .int(value)) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { put(key, try node.child(key).integer(value)) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { put(key, try node.child(key).integer(value)) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if value is DocumentID { return }
            let child = node.child(key)
            try child.box(value)
            set(key, child)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey> {
            let child = node.child(key)
            set(key, child)
            return child.container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = node.child(key)
            set(key, child)
            return child.unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let key = Key(stringValue: "super")!
            let child = node.child(key)
            set(key, child)
            return child
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            let child = node.child(key)
            set(key, child)
            return child
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let node: Node
        let items: Node.Items
        var codingPath: [any CodingKey] { node.codingPath }
        var count: Int { items.nodes.count }

        func next() -> Node {
            let child = node.child(IndexKey(items.nodes.count))
            items.nodes.append(child)
            return child
        }

        mutating func encodeNil() throws { next().leaf = .null }
        mutating func encode(_ value: Bool) throws { next().leaf = .bool(value) }
        mutating func encode(_ value: String) throws { next().leaf = .string(value) }
        mutating func encode(_ value: Double) throws { next().leaf = Value.double(value).wireJSON }
        mutating func encode(_ value: Float) throws { next().leaf = Value.double(Double(value)).wireJSON }
        mutating func encode(_ value: Int) throws { next().leaf = .int(Int64(value)) }
        mutating func encode(_ value: Int64) throws { next().leaf = .int(value) }
        mutating func encode(_ value: UInt64) throws { let n = next(); n.leaf = try n.integer(value) }
        mutating func encode(_ value: UInt) throws { let n = next(); n.leaf = try n.integer(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try next().box(value) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            next().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

        mutating func superEncoder() -> any Encoder { next() }
    }

    struct SingleContainer: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] { node.codingPath }

        mutating func encodeNil() throws { node.leaf = .null }
        mutating func encode(_ value: Bool) throws { node.leaf = .bool(value) }
        mutating func encode(_ value: String) throws { node.leaf = .string(value) }
        mutating func encode(_ value: Double) throws { node.leaf = Value.double(value).wireJSON }
        mutating func encode(_ value: Float) throws { node.leaf = Value.double(Double(value)).wireJSON }
        mutating func encode(_ value: Int) throws { node.leaf = .int(Int64(value)) }
        mutating func encode(_ value: Int8) throws { node.leaf = .int(Int64(value)) }
        mutating func encode(_ value: Int16) throws { node.leaf = .int(Int64(value)) }
        mutating func encode(_ value: Int32) throws { node.leaf = .int(Int64(value)) }
        mutating func encode(_ value: Int64) throws { node.leaf = .int(value) }
        mutating func encode(_ value: UInt) throws { node.leaf = try node.integer(value) }
        mutating func encode(_ value: UInt8) throws { node.leaf = .int(Int64(value)) }
        mutating func encode(_ value: UInt16) throws { node.leaf = .int(Int64(value)) }
        mutating func encode(_ value: UInt32) throws { node.leaf = .int(Int64(value)) }
        mutating func encode(_ value: UInt64) throws { node.leaf = try node.integer(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try node.box(value) }
    }
}
