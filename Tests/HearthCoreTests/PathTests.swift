import HearthCore
import Testing

/// Paths, ids, field paths and timestamps.
@Suite struct PathTests {
    @Test(arguments: ["", "a//b", "a/..", "a/.", "a/__x__", "__y__/b", "a/b%2Fc", "/"])
    func invalidPaths(_ raw: String) {
        #expect(throws: HearthError.self) { try parsePathSegments(raw, percentDecoded: true) }
    }

    @Test func validPaths() throws {
        #expect(try DocumentPath("users/alice").id == "alice")
        #expect(try DocumentPath("a%20b/c%C3%A9", percentDecoded: true).segments == ["a b", "cé"])
        #expect(try CollectionPath("a/b/c").parentDocument == DocumentPath("a/b"))
        #expect(throws: HearthError.self) { try DocumentPath("a/b/c") }
        #expect(throws: HearthError.self) { try CollectionPath("a/b") }
        #expect(try parsePathSegments("a/__/___/_x__") == ["a", "__", "___", "_x__"])
    }

    /// An id's NUL is named by its byte offset, before any `/`; short ids (stored inline) and long ones alike.
    @Test func idsWithNULOrSlashNameTheProblem() {
        func message(_ id: String) -> String? {
            do { try validateID(id); return nil } catch { return error.message }
        }
        let long = String(repeating: "x", count: 40)
        #expect(message("a\u{0}b")?.contains("NUL character (U+0000) at byte 1") == true)
        #expect(message("\u{0}")?.contains("at byte 0") == true)
        #expect(message("é/\u{0}")?.contains("at byte 3") == true)
        #expect(message(long + "/" + long + "\u{0}")?.contains("at byte 81") == true)
        #expect(message("a/b") == "id 'a/b' contains '/'")
        #expect(message(long + "/")?.hasSuffix("contains '/'") == true)
        #expect(message("plain") == nil)
        #expect(message(long + "é") == nil)
    }

    @Test func referenceOrderIsSegmentWise() throws {
        // "b" < "b-c" segment-wise, although "b/" > "b-" as plain strings.
        #expect(try DocumentPath("a/b/x/1") < DocumentPath("a/b-c/x/1"))
        #expect(try DocumentPath("a/b") < DocumentPath("a/b/c/d"))
    }

    @Test func autoIDs() {
        let ids = (0..<1000).map { _ in makeAutoID() }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { $0.utf8.count == 20 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
    }

    /// Ordered auto ids: 20 characters of `[A-Za-z0-9]`, the first 8 the milliseconds since 1970 in base 62 in
    /// byte order (so a later time sorts later, as the store compares ids), the last 12 random and uniform.
    @Test func orderedAutoIDsBeginWithTheirTimeAndSortByIt() throws {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        func less(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }
        // The ends of the range and a few times between: each reads back as itself.
        let limit: UInt64 = 218_340_105_584_896  // 62^8
        for ms: UInt64 in [0, 1, 61, 62, 1_790_000_000_000, limit - 1] {
            let id = orderedAutoID(at: ms)
            #expect(id.count == 20 && id.allSatisfy(alphabet.contains), "\(id)")
            try validateID(id)
            #expect(orderedAutoIDMilliseconds(id) == ms, "\(id)")
        }
        #expect(orderedAutoID(at: 0).hasPrefix("00000000"))
        #expect(orderedAutoID(at: limit - 1).hasPrefix("zzzzzzzz"))
        // A later millisecond sorts after an earlier one, whatever the random part.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let a = UInt64.random(in: 0..<limit - 1, using: &generator)
            let b = UInt64.random(in: a + 1..<limit, using: &generator)
            #expect(less(orderedAutoID(at: a), orderedAutoID(at: b)), "\(a) \(b)")
        }
        // Made now: the time is now's, never going back from one id to the next, and the random part is
        // uniform (24,000 characters: about 387 each; a byte taken modulo 62 would give eight of them 25% more).
        let before = currentMilliseconds()
        var counts: [Character: Int] = [:]
        var seen: Set<String> = []
        var last: UInt64 = 0
        for _ in 0..<2_000 {
            let id = makeOrderedAutoID()
            let ms = try #require(orderedAutoIDMilliseconds(id))
            #expect(ms >= last && ms >= before)
            last = ms
            seen.insert(id)
            for c in id.dropFirst(8) { counts[c, default: 0] += 1 }
        }
        #expect(last <= currentMilliseconds())
        #expect(seen.count == 2_000)
        #expect(counts.count == 62)
        #expect(counts.values.allSatisfy { (280...500).contains($0) }, "\(counts.sorted { $0.value < $1.value }.prefix(3))")
        // Ids not made this way have no time.
        #expect(orderedAutoIDMilliseconds("short") == nil)
        #expect(orderedAutoIDMilliseconds("0000000-000000000000") == nil)
        #expect(AutoIDs(rawValue: "ordered") == .ordered && AutoIDs(rawValue: "random") == .random)
    }

    @Test func fieldPaths() throws {
        #expect(try FieldPath(parsing: "a.b.c").segments == ["a", "b", "c"])
        #expect(try FieldPath(parsing: "`a.b`.c").segments == ["a.b", "c"])
        #expect(try FieldPath(parsing: #"`a\`b`"#).segments == ["a`b"])
        #expect(try FieldPath(parsing: "`a.b`.c").description == "`a.b`.c")
        #expect(try FieldPath(parsing: "_x1").description == "_x1")
        #expect(try FieldPath(parsing: "1x").description == "`1x`")
        for bad in ["", "a..b", ".a", "a.", "`a", "`a`b", "a`b`"] {
            #expect(throws: HearthError.self, "\(bad)") { try FieldPath(parsing: bad) }
        }
        #expect(throws: HearthError.self) { try FieldPath(parsing: String(repeating: "a", count: 1501)) }
    }

    @Test func timestamps() throws {
        let t = try #require(Timestamp(rfc3339: "2026-11-22T10:00:00.123456Z"))
        #expect(t.rfc3339 == "2026-11-22T10:00:00.123456Z")
        #expect(Timestamp(rfc3339: "2026-11-22T12:00:00.1234567+02:00")?.rfc3339 == "2026-11-22T10:00:00.123456Z")
        #expect(Timestamp(rfc3339: "1970-01-01T00:00:00Z")?.microseconds == 0)
        #expect(Timestamp(rfc3339: "1969-12-31T23:59:59.999999Z")?.microseconds == -1)
        #expect(Timestamp(rfc3339: "0001-01-01T00:00:00Z") == Timestamp.min)
        #expect(Timestamp(rfc3339: "9999-12-31T23:59:59.999999Z") == Timestamp.max)
        #expect(Timestamp(rfc3339: "2024-02-29T00:00:00Z") != nil)
        for bad in ["2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22", "2026-11-22T10:00:00", "2026-11-22T24:00:00Z",
                    "2026-11-22T10:00:00.Z", "x", "2026-11-22T10:00:00Zjunk"] {
            #expect(Timestamp(rfc3339: bad) == nil, "\(bad)")
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let t = Timestamp(microseconds: Int64.random(in: Timestamp.min.microseconds...Timestamp.max.microseconds, using: &rng))
            #expect(Timestamp(rfc3339: t.rfc3339) == t)
        }
    }

    /// Ids that Swift's `==` holds equal (canonically equivalent) but whose bytes differ name different
    /// documents, as in Firestore and in the store's keys: `é` as one code point, and as `e` and an accent.
    /// Auto ids are 20 characters of `[A-Za-z0-9]`, distinct, with every character about equally likely.
    @Test func autoIDsAreTwentyUniformCharacters() throws {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var seen: Set<String> = []
        var counts: [Character: Int] = [:]
        for _ in 0..<2_000 {
            let id = makeAutoID()
            #expect(id.count == 20 && id.allSatisfy(alphabet.contains), "\(id)")
            try validateID(id)
            seen.insert(id)
            for c in id { counts[c, default: 0] += 1 }
        }
        #expect(seen.count == 2_000)
        // 40,000 characters: about 645 each; a skewed draw (a byte taken modulo 62 without rejection) would
        // give the first eight characters about 25% more.
        #expect(counts.count == 62)
        #expect(counts.values.allSatisfy { (500...800).contains($0) }, "\(counts.sorted { $0.value < $1.value }.prefix(3))")
    }

    @Test func pathsAreEqualByTheirBytes() throws {
        let composed = try DocumentPath("caf\u{E9}/x"), decomposed = try DocumentPath("cafe\u{301}/x")
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed, try DocumentPath("caf\u{E9}/x")]).count == 2)
        #expect(composed.compare(decomposed) != 0)
        let collections = [try CollectionPath("caf\u{E9}"), try CollectionPath("cafe\u{301}")]
        #expect(collections[0] != collections[1] && Set(collections).count == 2)
        #expect(try DocumentPath("users/alice") == DocumentPath(uncheckedSegments: ["users", "alice"]))
        #expect(!sameUTF8("caf\u{E9}", "cafe\u{301}") && sameUTF8("caf\u{E9}", "caf\u{E9}"))
    }
}
