import HearthCore

/// A path with wildcards (`threads/{threadId}/rounds/{roundId}`): each `{name}` segment matches any one
/// segment and binds it to `name` in the event's `params`; every other segment must be equal.
public struct PathPattern: Sendable, Equatable, CustomStringConvertible {
    /// One segment of the pattern.
    public enum Segment: Sendable, Equatable {
        /// A segment that must be equal.
        case literal(String)
        /// `{name}`: any one segment, bound to `name`.
        case wildcard(String)
    }

    /// The segments, in order.
    public let segments: [Segment]
    /// The pattern as written.
    public let description: String

    /// Parses a pattern; `documents` asks for a document path (an even number of segments, each a valid id),
    /// since a pattern that fails either check could never match. Errors name `place`.
    public init(_ text: String, documents: Bool, at place: String) throws(HearthError) {
        description = text
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !text.isEmpty, !parts.contains(where: \.isEmpty) else {
            throw .invalidArgument("\(place): '\(text.prefix(200))' has an empty segment; a path is ids separated by single '/'")
        }
        var names: Set<String> = []
        var segments: [Segment] = []
        for part in parts {
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count >= 2 {
                let name = String(part.dropFirst().dropLast())
                guard Self.isParameterName(name) else {
                    throw .invalidArgument("\(place): '\(part.prefix(100))' is not a wildcard; one is {name}, a name of letters, digits and _ not starting with a digit (a wildcard matches one segment)")
                }
                guard names.insert(name).inserted else {
                    throw .invalidArgument("\(place): the wildcard {\(name)} appears twice in '\(text.prefix(200))'")
                }
                segments.append(.wildcard(name))
            } else if part.contains("{") || part.contains("}") {
                throw .invalidArgument("\(place): the segment '\(part.prefix(100))' mixes a wildcard with text; a wildcard is a whole segment, {name}")
            } else {
                if documents {
                    do { try validateID(part) } catch {
                        throw .invalidArgument("\(place): '\(text.prefix(200))' can never match: \(error.message)")
                    }
                }
                segments.append(.literal(part))
            }
        }
        if documents && parts.count % 2 != 0 {
            throw .invalidArgument("\(place): '\(text.prefix(200))' has \(parts.count) segment(s), so it names a collection and can never match a document; a document path has an even number")
        }
        self.segments = segments
    }

    /// The parameters bound by matching `path`'s segments, or nil when it does not match.
    public func match(_ path: some Collection<String>) -> [(String, String)]? {
        guard path.count == segments.count else { return nil }
        var params: [(String, String)] = []
        for (segment, part) in zip(segments, path) {
            switch segment {
            case .literal(let text): if text != part { return nil }
            case .wildcard(let name): params.append((name, part))
            }
        }
        return params
    }

    /// Whether `path`'s segments match, without binding the parameters.
    public func matches(_ path: some Collection<String>) -> Bool {
        guard path.count == segments.count else { return false }
        for (segment, part) in zip(segments, path) {
            if case .literal(let text) = segment, text != part { return false }
        }
        return true
    }

    static func isParameterName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }
}
