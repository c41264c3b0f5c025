import HearthCore
import HTTPTypes

/// A response as tests see it: status, headers, and the body as text and (when it parses) JSON.
public struct HTTPResult: Sendable {
    /// The status code.
    public var status: Int
    /// The response headers.
    public var headers: HTTPFields
    /// The body's bytes.
    public var body: [UInt8]
    /// The status line's HTTP version (`HTTP/1.1`, `HTTP/1.0`), when the answer was read off the wire
    /// (`RawHTTPConnection`).
    public var version: String?

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON, or nil when it is empty or not JSON.
    public var json: JSON? { try? JSON.parse(body) }

    /// The error code of an error response (`{"error": {"code": ...}}`).
    public var errorCode: String? { json?["error"]?["code"]?.stringValue }

    /// The error message of an error response.
    public var errorMessage: String? { json?["error"]?["message"]?.stringValue }

    /// A header's value.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }
}
