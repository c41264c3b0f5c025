import Foundation
import HTTPTypes

/// What a `GET` of an object's bytes asks by its conditional and `Range` headers (RFC 9110 §13 and §14), as a
/// plain decision over the headers and the object's ETag, time and size.
enum ByteRangeRequest: Equatable {
    /// The whole object, `200`.
    case whole
    /// The bytes of a range, `206` with `Content-Range`.
    case partial(Range<Int64>)
    /// No range of the object can be served: `416` with `Content-Range: bytes */size`.
    case unsatisfiable
    /// The client's copy is current: `304`.
    case notModified
    /// `If-Match` names another version: `412`.
    case preconditionFailed

    /// Decides a read. Conditions first (`If-Match`, then `If-None-Match`, or `If-Modified-Since` without
    /// it), then the range, which `If-Range` keeps only while the object is the version it names. A `Range`
    /// this does not serve (another unit, several ranges, malformed) is ignored, as the RFC allows: the whole
    /// object is sent.
    static func decide(_ headers: HTTPFields, etag: String, lastModified: String, size: Int64) -> ByteRangeRequest {
        if let match = headers[.ifMatch], !matches(match, etag: etag, weak: false) { return .preconditionFailed }
        if let noneMatch = headers[.ifNoneMatch] {
            if matches(noneMatch, etag: etag, weak: true) { return .notModified }
        } else if let since = headers[.ifModifiedSince], since == lastModified {
            return .notModified
        }
        guard let range = headers[.range] else { return .whole }
        if let ifRange = headers[.ifRange] {
            let current = ifRange.hasPrefix("\"") ? ifRange == "\"\(etag)\"" : ifRange == lastModified
            if !current { return .whole }
        }
        return parse(range, size: size)
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n`, against an object of `size` bytes.
    static func parse(_ header: String, size: Int64) -> ByteRangeRequest {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes=") else { return .whole }
        let specs = text.dropFirst("bytes=".count).split(separator: ",", omittingEmptySubsequences: false)
        guard specs.count == 1 else { return .whole }
        let spec = specs[0].trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        func number(_ digits: Substring) -> Int64? {
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return Int64(digits) ?? .max
        }
        if first.isEmpty {
            guard let suffix = number(last) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .partial(max(0, size - suffix)..<size)
        }
        guard let start = number(first) else { return .whole }
        var end = size - 1
        if !last.isEmpty {
            guard let given = number(last), given >= start else { return .whole }
            end = min(given, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .partial(start..<(end + 1))
    }

    /// Whether an `If-Match` or `If-None-Match` list names the ETag (`*` names any); the weak comparison
    /// ignores a `W/` prefix.
    static func matches(_ list: String, etag: String, weak: Bool) -> Bool {
        for item in list.split(separator: ",") {
            var tag = Substring(item.trimmingCharacters(in: .whitespaces))
            if tag == "*" { return true }
            if tag.hasPrefix("W/") {
                guard weak else { continue }
                tag = tag.dropFirst(2)
            }
            if tag == "\"\(etag)\"" { return true }
        }
        return false
    }
}
