import Foundation
import SwiftProtobuf
import Testing
import HearthFirestoreProtos

/// Messages built in Swift survive encoding and decoding unchanged.
@Suite struct RoundTripTests {
    typealias Value = Google_Firestore_V1_Value
    typealias Query = Google_Firestore_V1_StructuredQuery

    static func roundTrip<M: SwiftProtobuf.Message & Equatable>(_ message: M) throws -> M {
        let bytes: [UInt8] = try message.serializedBytes()
        return try M(serializedBytes: bytes)
    }

    static func value(_ kind: Value.OneOf_ValueType) -> Value {
        var value = Value()
        value.valueType = kind
        return value
    }

    static func field(_ path: String) -> Query.FieldReference {
        var reference = Query.FieldReference()
        reference.fieldPath = path
        return reference
    }

    @Test func documentWithEveryValueType() throws {
        var point = Google_Type_LatLng()
        point.latitude = -33.8688
        point.longitude = 151.2093
        var array = Google_Firestore_V1_ArrayValue()
        array.values = [Self.value(.integerValue(1)), Self.value(.nullValue(.nullValue))]
        var map = Google_Firestore_V1_MapValue()
        map.fields = ["inner": Self.value(.arrayValue(array))]
        var document = Google_Firestore_V1_Document()
        document.name = "projects/p/databases/(default)/documents/a/b"
        document.fields = [
            "null": Self.value(.nullValue(.nullValue)),
            "bool": Self.value(.booleanValue(false)),
            "int": Self.value(.integerValue(.min)),
            "double": Self.value(.doubleValue(.infinity)),
            "time": Self.value(.timestampValue(Google_Protobuf_Timestamp(seconds: -1, nanos: 999_999_000))),
            "string": Self.value(.stringValue("")),
            "bytes": Self.value(.bytesValue(Data())),
            "reference": Self.value(.referenceValue("projects/p/databases/(default)/documents/c/d")),
            "geo": Self.value(.geoPointValue(point)),
            "array": Self.value(.arrayValue(array)),
            "map": Self.value(.mapValue(map)),
        ]
        document.createTime = Google_Protobuf_Timestamp(seconds: 1, nanos: 2)
        document.updateTime = Google_Protobuf_Timestamp(seconds: 3, nanos: 4)

        let decoded = try Self.roundTrip(document)
        #expect(decoded == document)
        // Zero values inside a oneof are still sent, so an empty string stays a string.
        #expect(decoded.fields["string"]?.valueType == .stringValue(""))
        #expect(decoded.fields["bool"]?.valueType == .booleanValue(false))
        #expect(decoded.fields["null"]?.valueType == .nullValue(.nullValue))
    }

    @Test func structuredQueryWithCompositeFiltersAndCursors() throws {
        var equal = Query.FieldFilter()
        equal.field = Self.field("city")
        equal.op = .equal
        equal.value = Self.value(.stringValue("Paris"))
        var notEqual = Query.FieldFilter()
        notEqual.field = Self.field("state")
        notEqual.op = .notEqual
        notEqual.value = Self.value(.stringValue("closed"))
        var isNaN = Query.UnaryFilter()
        isNaN.op = .isNan
        isNaN.field = Self.field("score")
        var and = Query.CompositeFilter()
        and.op = .and
        and.filters = [Query.Filter.with { $0.fieldFilter = equal }, Query.Filter.with { $0.unaryFilter = isNaN }]
        var or = Query.CompositeFilter()
        or.op = .or
        or.filters = [Query.Filter.with { $0.compositeFilter = and }, Query.Filter.with { $0.fieldFilter = notEqual }]

        var query = Query()
        query.from = [Query.CollectionSelector.with { $0.collectionID = "places"; $0.allDescendants = true }]
        query.where = Query.Filter.with { $0.compositeFilter = or }
        query.orderBy = [Query.Order.with { $0.field = Self.field("score"); $0.direction = .descending }]
        query.startAt = Google_Firestore_V1_Cursor.with { $0.values = [Self.value(.doubleValue(9.5))]; $0.before = true }
        query.endAt = Google_Firestore_V1_Cursor.with { $0.values = [Self.value(.doubleValue(1))] }
        query.offset = 2
        query.limit = Google_Protobuf_Int32Value(10)

        let decoded = try Self.roundTrip(query)
        #expect(decoded == query)
        #expect(decoded.where.compositeFilter.filters[0].compositeFilter.filters[1].unaryFilter.op == .isNan)
        #expect(decoded.hasEndAt && !decoded.endAt.before)
    }

    @Test func listenResponseWithATargetChange() throws {
        var change = Google_Firestore_V1_TargetChange()
        change.targetChangeType = .current
        change.targetIds = [1, 2, 3]
        change.resumeToken = Data([0xCA, 0xFE])
        change.readTime = Google_Protobuf_Timestamp(seconds: 1_700_000_000, nanos: 0)
        change.cause = Google_Rpc_Status.with { $0.code = 3; $0.message = "bad target" }
        var response = Google_Firestore_V1_ListenResponse()
        response.targetChange = change

        let decoded = try Self.roundTrip(response)
        #expect(decoded == response)
        guard case .targetChange(let decodedChange) = decoded.responseType else {
            Issue.record("expected a target change, got \(String(describing: decoded.responseType))")
            return
        }
        #expect(decodedChange.targetChangeType == .current)
        #expect(decodedChange.cause.message == "bad target")

        // NO_CHANGE is the enum's zero value: a target change carrying only a resume token.
        var noChange = Google_Firestore_V1_ListenResponse()
        noChange.targetChange = Google_Firestore_V1_TargetChange.with { $0.resumeToken = Data([1]) }
        #expect(try Self.roundTrip(noChange).targetChange.targetChangeType == .noChange)
    }

    @Test func existenceFilterWithABloomFilter() throws {
        var response = Google_Firestore_V1_ListenResponse()
        response.filter = Google_Firestore_V1_ExistenceFilter.with {
            $0.targetID = 4
            $0.count = 120
            $0.unchangedNames = Google_Firestore_V1_BloomFilter.with {
                $0.bits = Google_Firestore_V1_BitSequence.with { $0.bitmap = Data(repeating: 0xA5, count: 64); $0.padding = 3 }
                $0.hashCount = 9
            }
        }
        #expect(try Self.roundTrip(response) == response)
    }
}
