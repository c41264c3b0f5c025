import Foundation
import HTTPTypes

/// The pages behind the account messages' links, driven as a browser does: follow the link, read the
/// form's fields, post them back form-encoded.
extension HearthClient {
    /// GETs a link of a message (absolute, on this server) by its path and query, with no credentials.
    public func openLink(_ link: String) async throws -> HTTPResult {
        guard let url = URLComponents(string: link) else { throw ExpectationFailure("not a URL: \(link)") }
        let target = url.percentEncodedPath + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
        return try await get(target, as: .nobody)
    }

    /// POSTs fields form-encoded (`application/x-www-form-urlencoded`) to `target`, with no credentials.
    public func submitForm(_ fields: [(String, String)], to target: String = "/auth/action") async throws -> HTTPResult {
        let body = fields.map { Self.formEncoded($0.0) + "=" + Self.formEncoded($0.1) }.joined(separator: "&")
        return try await request(.post, target, body: Array(body.utf8), contentType: "application/x-www-form-urlencoded",
                                 as: .nobody)
    }

    /// The `name` and `value` of every `<input>` of a page, entities decoded, in order.
    public static func inputs(in html: String) -> [(name: String, value: String)] {
        var found: [(String, String)] = []
        var rest = html[...]
        while let tag = rest.range(of: #"<input[^>]*>"#, options: .regularExpression) {
            let text = String(rest[tag])
            rest = rest[tag.upperBound...]
            guard let name = attribute("name", in: text) else { continue }
            found.append((name, attribute("value", in: text) ?? ""))
        }
        return found
    }

    static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.range(of: " \(name)=\"[^\"]*\"", options: .regularExpression) else { return nil }
        let quoted = tag[range].dropFirst(name.count + 3).dropLast()
        return quoted.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text)
    }
}
