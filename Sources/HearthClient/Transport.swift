import AsyncHTTPClient
import Foundation
import HearthCore
import NIOCore
import NIOHTTP1

/// One HTTP call of the API and its answer: the one place requests are made and errors are read.
struct Transport: Sendable {
    let baseURL: URL
    let http: HTTPClient
    let timeout: TimeAmount

    /// An answer: its status, its JSON body (nil for `204`), and its headers.
    struct Answer {
        var status: Int
        var body: JSON?
        var headers: HTTPHeaders
    }

    /// The characters a path segment or a query value keeps as they are (RFC 3986's unreserved ones).
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A path of the API with each segment percent-encoded (`/v1/docs/users/J%C3%BCrgen`).
    static func encodedPath(_ prefix: String, _ path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? String($0)
        }
        return prefix + segments.joined(separator: "/")
    }

    func url(_ path: String, query: [(String, String)]) -> String {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path
        if !query.isEmpty {
            text += "?" + query.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? $0.1)" }
                .joined(separator: "&")
        }
        return text
    }

    /// Sends a request; an answer of 400 or above becomes the `HearthClientError` it carries.
    func send(_ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: JSON? = nil,
              token: String?, headers extra: [(String, String)] = []) async throws(HearthClientError) -> Answer {
        var request = HTTPClientRequest(url: url(path, query: query))
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        }
        let status: Int
        let headers: HTTPHeaders
        let bytes: ByteBuffer
        do {
            let response = try await http.execute(request, timeout: timeout)
            status = Int(response.status.code)
            headers = response.headers
            bytes = try await response.body.collect(upTo: 64 << 20)
        } catch {
            throw HearthClientError(code: .unavailable, message: "\(method.rawValue) \(path): \(error)")
        }
        let json: JSON?
        if bytes.readableBytes == 0 {
            json = nil
        } else {
            do {
                json = try JSON.parse(Array(bytes.readableBytesView))
            } catch {
                if status >= 400 {
                    throw HearthClientError(code: Self.code(forStatus: status), message: String(buffer: bytes), status: status)
                }
                throw .decoding("\(method.rawValue) \(path) answered \(status) with a body that is not JSON: \(error.message)")
            }
        }
        if status >= 400 {
            let code = json?["error"]?["code"]?.stringValue.map(HearthClientError.Code.init(rawValue:)) ?? Self.code(forStatus: status)
            let message = json?["error"]?["message"]?.stringValue ?? "\(method.rawValue) \(path) answered \(status)"
            throw HearthClientError(code: code, message: message, status: status,
                                    retryAfter: headers.first(name: "Retry-After").flatMap { Int($0) })
        }
        return Answer(status: status, body: json, headers: headers)
    }

    /// The code of an error answer without the API's error shape (a proxy's, say).
    static func code(forStatus status: Int) -> HearthClientError.Code {
        switch status {
        case 400: return .invalidArgument
        case 401: return .unauthenticated
        case 403: return .permissionDenied
        case 404: return .notFound
        case 409: return .aborted
        case 412: return .failedPrecondition
        case 413: return .payloadTooLarge
        case 429: return .resourceExhausted
        case 503: return .unavailable
        default: return .internal
        }
    }
}
