import Foundation
import HearthClient
import HearthCore
import Testing

/// Codable models into Hearth's wire encoding and back, without a server: the encoder's output is read by
/// HearthCore's own decoder of the encoding (the server's), so both sides agree on every type.
@Suite struct CodingTests {
    struct Place: Codable, Equatable {
        @DocumentID var id: String?
        var name: String
        var visits: Int
        var rating: Double
        var wholeRating: Double
        var opened: Date
        var checked: Timestamp
        var photo: Data
        var location: GeoPoint
        var tags: [String]
        var extra: [String: Int]
        var note: String?
        var big: Int64
    }

    static let hearth = Hearth(url: URL(string: "http://127.0.0.1:1")!)

    static let place = Place(id: "ignored", name: "Café", visits: 3, rating: 4.5, wholeRating: 4, opened: Date(timeIntervalSince1970: 1_700_000_000.123456),
                             checked: Timestamp(microseconds: 42), photo: Data([0, 1, 255]), location: GeoPoint(latitude: 48.85, longitude: 2.35),
                             tags: ["a", "b"], extra: ["$price": 3], note: nil, big: Int64.max)

    @Test func aModelEncodesIntoTheWireTypes() throws {
        let fields = try DocumentEncoder().encode(Self.place)
        #expect(fields["id"] == nil, "a @DocumentID is the path, never a field")
        #expect(fields["note"] == nil, "a nil optional is left out")
        #expect(fields["name"] == .string("Café"))
        #expect(fields["visits"] == .int(3))
        #expect(fields["rating"] == .double(4.5))
        #expect(fields["wholeRating"] == .double(4), "a Double stays a double even when whole")
        #expect(fields["opened"] == .timestamp(Timestamp(microseconds: 1_700_000_000_123_456)))
        #expect(fields["checked"] == .timestamp(Timestamp(microseconds: 42)))
        #expect(fields["photo"] == .bytes([0, 1, 255]))
        #expect(fields["location"] == .geoPoint(GeoPoint(latitude: 48.85, longitude: 2.35)))
        #expect(fields["tags"] == .array([.string("a"), .string("b")]))
        #expect(fields["extra"] == .map(["$price": .int(3)]), "a map with one $ key is escaped on the wire and read back as a map")
        #expect(fields["big"] == .int(Int64.max))
    }

    @Test func aModelDecodesBackWithItsID() throws {
        let fields = try DocumentEncoder().encode(Self.place)
        let back = try DocumentDecoder().decode(Place.self, from: fields, path: "places/p1", hearth: Self.hearth)
        var expected = Self.place
        expected.id = "p1"
        #expect(back == expected)
    }

    struct Post: Codable {
        var title: String
        @ServerTimestamp var createdAt: Date?
        var author: DocumentReference
        var likes: FieldValue?
    }

    @Test func sentinelsAndReferencesEncodeAsTheAPIWantsThem() throws {
        let post = Post(title: "t", createdAt: nil, author: Self.hearth.document("users/ann"), likes: .increment(1))
        let text = try DocumentEncoder().wireText(post)
        #expect(text == #"{"author":{"$ref":"users/ann"},"createdAt":{"$serverTimestamp":true},"likes":{"$increment":1},"title":"t"}"#)
        // Read back (as the server would store it), the reference and the timestamp decode.
        let stored: [String: Value] = ["title": .string("t"), "createdAt": .timestamp(Timestamp(microseconds: 5)),
                                       "author": .reference(try DocumentPath("users/ann"))]
        struct Read: Codable { var title: String; @ServerTimestamp var createdAt: Timestamp?; var author: DocumentReference }
        let read = try DocumentDecoder().decode(Read.self, from: stored, path: "posts/1", hearth: Self.hearth)
        #expect(read.createdAt == Timestamp(microseconds: 5))
        #expect(read.author.path == "users/ann")
        let missing = try DocumentDecoder().decode(Read.self, from: ["title": .string("t"), "author": .reference(try DocumentPath("users/ann"))],
                                             path: "posts/1", hearth: Self.hearth)
        #expect(missing.createdAt == nil, "a @ServerTimestamp field not yet set decodes as nil")
    }

    @Test func integersAndDoublesStayApart() throws {
        struct Numbers: Codable { var i: Int; var d: Double; var u8: UInt8; var f: Float }
        let fields = try DocumentEncoder().encode(Numbers(i: 3, d: 3, u8: 255, f: 0.5))
        #expect(fields == ["i": .int(3), "d": .double(3), "u8": .int(255), "f": .double(0.5)])
        // An integer decodes into a Double; a whole double into an Int; a fraction does not.
        struct Loose: Codable { var i: Double; var d: Int }
        let loose = try DocumentDecoder().decode(Loose.self, from: ["i": .int(7), "d": .double(8)], path: "n/1", hearth: nil)
        #expect(loose.i == 7 && loose.d == 8)
        #expect(throws: HearthClientError.self) {
            try DocumentDecoder().decode(Loose.self, from: ["i": .int(7), "d": .double(8.5)], path: "n/1", hearth: nil)
        }
    }

    /// What does not encode as a document is refused with `invalid-argument`, naming the field, before any request.
    @Test(arguments: [
        (Bad.tooBig, "field 'n'", "does not fit in a 64-bit signed integer"),
        (Bad.array, "", "a document must encode as a map of fields"),
        (Bad.date, "", "a document must encode as a map of fields"),
    ])
    func valuesWithoutAHearthValueAreRefused(_ bad: Bad, _ place: String, _ reason: String) throws {
        let error = #expect(throws: HearthClientError.self) { try bad.encode() }
        #expect(error?.code == .invalidArgument)
        #expect(error?.status == nil)
        #expect(place.isEmpty || error?.message.contains(place) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    enum Bad: String, Sendable {
        case tooBig, array, date

        func encode() throws {
            struct Big: Codable { var n: UInt64 }
            switch self {
            case .tooBig: _ = try DocumentEncoder().encode(Big(n: .max))
            case .array: _ = try DocumentEncoder().encode([1, 2])
            case .date: _ = try DocumentEncoder().encode(Date())
            }
        }
    }

    @Test func aFieldOfTheWrongTypeNamesTheFieldAndTheDocument() throws {
        struct Typed: Codable { var count: Int }
        let error = #expect(throws: HearthClientError.self) {
            try DocumentDecoder().decode(Typed.self, from: ["count": .string("three")], path: "c/1", hearth: nil)
        }
        #expect(error?.code == .dataLoss)
        #expect(error?.message.contains("c/1") == true && error?.message.contains("count") == true, "\(error?.message ?? "")")
    }
}
