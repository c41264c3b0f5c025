import Foundation
import GRPCCore
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// Every value type goes through Firestore's gRPC face and comes back the same, and reads the same over HTTP.
@Suite struct FirestoreValueTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let value: Google_Firestore_V1_Value
        /// The field as `GET /v1/docs` writes it (docs/api.md, Values).
        let json: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "null", value: .null, json: "null"),
        Case(name: "boolean", value: .bool(true), json: "true"),
        Case(name: "integer", value: .int(Int64.min), json: "-9223372036854775808"),
        Case(name: "small integer", value: .int(42), json: "42"),
        Case(name: "double", value: .double(0.5), json: "0.5"),
        Case(name: "infinity", value: .double(-.infinity), json: #"{"$double":"-Infinity"}"#),
        Case(name: "timestamp", value: .with { $0.timestampValue = Google_Protobuf_Timestamp(seconds: 1_795_000_000, nanos: 123_456_000) },
             json: #"{"$timestamp":"2026-11-18T11:06:40.123456Z"}"#),
        Case(name: "string", value: .string("héllo ✓"), json: #""héllo ✓""#),
        Case(name: "bytes", value: .with { $0.bytesValue = Data([0, 1, 254, 255]) }, json: #"{"$bytes":"AAH+/w=="}"#),
        Case(name: "reference", value: .with { $0.referenceValue = "projects/test/databases/(default)/documents/users/alice" },
             json: #"{"$ref":"users/alice"}"#),
        Case(name: "geopoint", value: .with { $0.geoPointValue = .with { $0.latitude = 48.85; $0.longitude = 2.35 } },
             json: #"{"$geo":{"latitude":48.85,"longitude":2.35}}"#),
        Case(name: "array", value: .array([.int(1), .string("two"), .map(["three": .int(3)])]),
             json: #"[1,"two",{"three":3}]"#),
        Case(name: "map", value: .map(["a": .map(["b": .bool(false)])]), json: #"{"a":{"b":false}}"#),
        Case(name: "map that reads like a tag", value: .map(["$ref": .string("not a reference")]),
             json: #"{"$map":{"$ref":"not a reference"}}"#),
    ]

    @Test(arguments: cases)
    func valueRoundTrips(_ c: Case) async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("values/v", ["f": c.value])])
                let read = try await firestore.get("values/v")
                #expect(read.fields["f"] == c.value)
                #expect(read.name == firestore.name("values/v"))
                #expect(read.hasCreateTime && read.hasUpdateTime)
                let result = try await http.get("/v1/docs/values/v")
                #expect(result.status == 200)
                #expect(result.text.contains(#""data":{"f":\#(c.json)}"#), "\(result.text)")
            }
        }
    }

    @Test func nanRoundTrips() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("values/nan", ["f": .double(.nan)])])
                #expect(try await firestore.get("values/nan").fields["f"]?.doubleValue.isNaN == true)
            }
        }
    }
}
