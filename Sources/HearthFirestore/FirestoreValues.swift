import Foundation
import HearthCore
import HearthFirestoreProtos
import SwiftProtobuf

/// Firestore's `Value` messages and Hearth's values, both ways. Incoming values are checked as the HTTP API
/// checks its JSON (field names, nesting depth, geopoint ranges, timestamp range); a reference names a document
/// of the request's database (in any project) and is stored relative to it; only `__name__` values, which are
/// compared with stored paths, carry the database's prefix (`FirestoreDatabase.stored`).
extension FirestoreDatabase {
    func value(_ proto: Google_Firestore_V1_Value, field: String, depth: Int = 0) throws(HearthError) -> Value {
        switch proto.valueType {
        case nil, .nullValue?: return .null
        case .booleanValue(let b)?: return .bool(b)
        case .integerValue(let i)?: return .int(i)
        case .doubleValue(let d)?: return .double(d)
        case .timestampValue(let t)?: return .timestamp(try Self.timestamp(t, field: field))
        case .stringValue(let s)?: return .string(s)
        case .bytesValue(let d)?: return .bytes([UInt8](d))
        case .referenceValue(let name)?:
            do throws(HearthError) {
                let (database, segments) = try Self.split(name)
                guard !segments.isEmpty, segments.count % 2 == 0 else {
                    throw HearthError.invalidArgument("a reference names a document (an even number of segments)")
                }
                // A reference is stored relative to its database, so that it reads back through any face.
                guard database.database == self.database else {
                    throw HearthError.invalidArgument("a reference must name a document of the same database (\(self.database))")
                }
                return .reference(DocumentPath(uncheckedSegments: segments))
            } catch {
                throw .invalidArgument("\(field): '\(name.prefix(200))' is not a document reference: \(error.message)")
            }
        case .geoPointValue(let g)?:
            guard (-90.0...90.0).contains(g.latitude) else {
                throw .invalidArgument("\(field): latitude \(g.latitude) is outside [-90, 90]")
            }
            guard (-180.0...180.0).contains(g.longitude) else {
                throw .invalidArgument("\(field): longitude \(g.longitude) is outside [-180, 180]")
            }
            return .geoPoint(GeoPoint(latitude: g.latitude, longitude: g.longitude))
        case .arrayValue(let a)?:
            try Self.checkDepth(depth + 1, field)
            var out: [Value] = []
            out.reserveCapacity(a.values.count)
            for (k, item) in a.values.enumerated() {
                if case .arrayValue? = item.valueType {
                    throw .invalidArgument("\(field)[\(k)]: an array may not hold an array directly")
                }
                out.append(try value(item, field: "\(field)[\(k)]", depth: depth + 1))
            }
            return .array(out)
        case .mapValue(let m)?:
            try Self.checkDepth(depth + 1, field)
            return .map(try fields(m.fields, field: field, depth: depth + 1))
        case .fieldReferenceValue?, .variableReferenceValue?, .functionValue?, .pipelineValue?:
            throw .invalidArgument("\(field): pipeline expressions are not values a document can hold")
        }
    }

    /// A map's (or a document's) fields, each name checked.
    func fields(_ proto: [String: Google_Firestore_V1_Value], field: String = "", depth: Int = 0) throws(HearthError) -> [String: Value] {
        var out: [String: Value] = [:]
        out.reserveCapacity(proto.count)
        for (key, item) in proto {
            let child = field.isEmpty ? key : "\(field).\(key)"
            try validateFieldName(key, at: child)
            out[key] = try value(item, field: child, depth: depth)
        }
        return out
    }

    static func checkDepth(_ depth: Int, _ field: String) throws(HearthError) {
        if depth >= Limits.maxDepth {
            throw .invalidArgument("\(field) is nested more than \(Limits.maxDepth) levels deep")
        }
    }

    /// A protobuf timestamp as Hearth's (microseconds; finer digits are dropped, as Firestore stores them).
    static func timestamp(_ t: Google_Protobuf_Timestamp, field: String) throws(HearthError) -> Timestamp {
        guard (0..<1_000_000_000).contains(t.nanos) else {
            throw .invalidArgument("\(field): timestamp nanos \(t.nanos) is outside [0, 999999999]")
        }
        let (micros, overflow) = t.seconds.multipliedReportingOverflow(by: 1_000_000)
        let stamp = Timestamp(microseconds: micros &+ Int64(t.nanos / 1_000))
        guard !overflow, stamp >= .min, stamp <= .max else {
            throw .invalidArgument("\(field): timestamp is outside 0001-01-01 to 9999-12-31")
        }
        return stamp
    }

    /// A `__name__` value as the stored path it is compared with.
    func stored(_ value: Value) -> Value {
        if case .reference(let path) = value, !prefix.isEmpty {
            return .reference(DocumentPath(uncheckedSegments: prefix + path.segments))
        }
        return value
    }

    // MARK: Out

    func proto(_ value: Value) -> Google_Firestore_V1_Value {
        var out = Google_Firestore_V1_Value()
        switch value {
        case .null: out.nullValue = .nullValue
        case .bool(let b): out.booleanValue = b
        case .int(let i): out.integerValue = i
        case .double(let d): out.doubleValue = d
        case .timestamp(let t): out.timestampValue = Self.proto(t)
        case .string(let s): out.stringValue = s
        case .bytes(let b): out.bytesValue = Data(b)
        case .reference(let path): out.referenceValue = documentsRoot + "/" + path.description
        case .geoPoint(let g):
            var latLng = Google_Type_LatLng()
            latLng.latitude = g.latitude
            latLng.longitude = g.longitude
            out.geoPointValue = latLng
        case .array(let items):
            var array = Google_Firestore_V1_ArrayValue()
            array.values = items.map(proto)
            out.arrayValue = array
        case .map(let fields):
            var map = Google_Firestore_V1_MapValue()
            map.fields = fields.mapValues(proto)
            out.mapValue = map
        }
        return out
    }

    static func proto(_ t: Timestamp) -> Google_Protobuf_Timestamp {
        let (seconds, micros) = floorDivide(t.microseconds, 1_000_000)
        return Google_Protobuf_Timestamp(seconds: seconds, nanos: Int32(micros * 1_000))
    }

    /// A document as Firestore sends it; with a mask, only the masked fields.
    func proto(_ document: Document, mask: [FieldPath]? = nil) -> Google_Firestore_V1_Document {
        var out = Google_Firestore_V1_Document()
        out.name = name(of: document.path)
        out.fields = Self.masked(document.fields, mask).mapValues(proto)
        out.createTime = Self.proto(document.createTime)
        out.updateTime = Self.proto(document.updateTime)
        return out
    }

    func proto(_ stored: StoredDocument, mask: [FieldPath]? = nil) throws(HearthError) -> Google_Firestore_V1_Document {
        proto(try stored.decoded(), mask: mask)
    }

    /// The fields a document mask keeps (every field without a mask).
    static func masked(_ fields: [String: Value], _ mask: [FieldPath]?) -> [String: Value] {
        guard let mask else { return fields }
        var out: [String: Value] = [:]
        for path in mask {
            if let value = fields[path: path] { out.set(value, at: path) }
        }
        return out
    }

    /// A `DocumentMask`'s field paths, parsed.
    static func mask(_ proto: Google_Firestore_V1_DocumentMask) throws(HearthError) -> [FieldPath] {
        var out: [FieldPath] = []
        for text in proto.fieldPaths {
            do { out.append(try FieldPath(parsing: text)) } catch {
                throw .invalidArgument("mask field path '\(text.prefix(200))': \(error.message)")
            }
        }
        return out
    }
}
