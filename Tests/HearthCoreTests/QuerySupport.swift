import Testing
import HearthCore

/// Shared helpers for the query tests.
enum QT {
    static let t0 = Timestamp(microseconds: 1_000_000)

    /// A document from a path and wire JSON text for its fields.
    static func doc(_ path: String, _ json: String) -> Document {
        let fields = try! Value.decodeFields(JSON.parse(json))
        return Document(path: try! DocumentPath(path), fields: fields, createTime: t0, updateTime: t0)
    }

    /// Parses a query from JSON text; the test fails on error.
    static func query(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Query? {
        do { return try Query(jsonText: text) } catch {
            Issue.record("query did not parse: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The ids of the documents a query returns over a dataset.
    static func ids(_ text: String, _ docs: [Document], sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        guard let q = query(text, sourceLocation: sourceLocation) else { return ["<parse error>"] }
        do { return try q.run(over: docs).map(\.path.id) } catch {
            Issue.record("query failed: \(error)", sourceLocation: sourceLocation)
            return ["<run error>"]
        }
    }

    /// The error message a query's parsing gives, or nil when it parses.
    static func error(_ text: String) -> HearthError? {
        do {
            _ = try Query(jsonText: text)
            return nil
        } catch { return error }
    }

    /// Firestore's sample `cities` dataset from its query documentation.
    static let cities: [Document] = [
        doc("cities/SF", #"{"name": "San Francisco", "state": "CA", "country": "USA", "capital": false, "population": 860000, "regions": ["west_coast", "norcal"]}"#),
        doc("cities/LA", #"{"name": "Los Angeles", "state": "CA", "country": "USA", "capital": false, "population": 3900000, "regions": ["west_coast", "socal"]}"#),
        doc("cities/DC", #"{"name": "Washington, D.C.", "state": null, "country": "USA", "capital": true, "population": 680000, "regions": ["east_coast"]}"#),
        doc("cities/TOK", #"{"name": "Tokyo", "state": null, "country": "Japan", "capital": true, "population": 9000000, "regions": ["kanto", "honshu"]}"#),
        doc("cities/BJ", #"{"name": "Beijing", "state": null, "country": "China", "capital": true, "population": 21500000, "regions": ["jingjinji", "hebei"]}"#),
    ]

    /// Lexicographic byte order, as SQLite's memcmp on BLOBs: -1, 0 or 1.
    static func memcmp(_ a: [UInt8], _ b: [UInt8]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// The seed for a property test: `HEARTH_SEED` when set (to replay a failure), otherwise a fresh one.
    static func seed() -> UInt64 {
        if let text = getenvString("HEARTH_SEED"), let s = UInt64(text) { return s }
        return UInt64.random(in: 0...UInt64.max)
    }

    static func getenvString(_ name: String) -> String? {
        guard let p = getenv(name) else { return nil }
        return String(cString: p)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
