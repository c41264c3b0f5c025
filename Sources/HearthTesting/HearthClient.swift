import HearthCore
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOPosix

/// Who a test request acts as.
public enum Caller: Sendable {
    /// The admin key.
    case admin
    /// No credentials.
    case nobody
    /// A bearer token (a user's access token, or anything a test wants to send).
    case token(String)
    /// A raw `Authorization` header value.
    case authorization(String)
}

/// A real HTTP/1.1 client on one loopback connection to a Hearth server.
public final class HearthClient: Sendable {
    let client: TestClient
    let adminKey: String
    /// The caller used when a request names none.
    public let defaultCaller: Caller

    /// Connects to a server on loopback, on `eventLoopGroup` (NIO's shared one unless a caller wants its
    /// requests kept apart from other connections' work, as a load driver's writer does).
    public init(port: Int, adminKey: String, as caller: Caller = .admin,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        // A generous wait for each answer: tests bound what happens, never how long it takes, and a debug
        // build answering a heavy request beside the whole suite can take well over the default 15 s.
        client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)),
                            eventLoopGroupProvider: .shared(eventLoopGroup))
        client.connect()
        self.adminKey = adminKey
        self.defaultCaller = caller
    }

    /// Closes the connection, once it is made: closing before would leave the socket that connects later open.
    public func close() async {
        _ = try? await client.getChannel()
        try? await client.shutdown()
    }

    /// Sends a request with a raw body.
    public func request(_ method: HTTPRequest.Method, _ uri: String, body: [UInt8]? = nil,
                        contentType: String? = "application/json", headers: [String: String] = [:],
                        as caller: Caller? = nil) async throws -> HTTPResult {
        var fields = HTTPFields()
        switch caller ?? defaultCaller {
        case .admin: fields[.authorization] = "Bearer \(adminKey)"
        case .nobody: break
        case .token(let token): fields[.authorization] = "Bearer \(token)"
        case .authorization(let value): fields[.authorization] = value
        }
        if body != nil, let contentType { fields[.contentType] = contentType }
        for (name, value) in headers {
            if let field = HTTPField.Name(name) { fields[field] = value }
        }
        let response = try await client.execute(.init(uri, method: method, headers: fields,
                                                      body: body.map { ByteBuffer(bytes: $0) }))
        let bytes = response.body.map { Array($0.readableBytesView) } ?? []
        return HTTPResult(status: Int(response.status.code), headers: response.headers, body: bytes)
    }

    /// Sends a request with a JSON body given as text.
    public func request(_ method: HTTPRequest.Method, _ uri: String, json: String, headers: [String: String] = [:],
                        as caller: Caller? = nil) async throws -> HTTPResult {
        try await request(method, uri, body: Array(json.utf8), headers: headers, as: caller)
    }

    /// GET.
    public func get(_ uri: String, headers: [String: String] = [:], as caller: Caller? = nil) async throws -> HTTPResult {
        try await request(.get, uri, headers: headers, as: caller)
    }

    /// PUT with a JSON body.
    public func put(_ uri: String, _ json: String, headers: [String: String] = [:], as caller: Caller? = nil) async throws -> HTTPResult {
        try await request(.put, uri, json: json, headers: headers, as: caller)
    }

    /// POST with a JSON body.
    public func post(_ uri: String, _ json: String = "{}", headers: [String: String] = [:], as caller: Caller? = nil) async throws -> HTTPResult {
        try await request(.post, uri, json: json, headers: headers, as: caller)
    }

    /// PATCH with a JSON body.
    public func patch(_ uri: String, _ json: String, headers: [String: String] = [:], as caller: Caller? = nil) async throws -> HTTPResult {
        try await request(.patch, uri, json: json, headers: headers, as: caller)
    }

    /// DELETE.
    public func delete(_ uri: String, headers: [String: String] = [:], as caller: Caller? = nil) async throws -> HTTPResult {
        try await request(.delete, uri, headers: headers, as: caller)
    }
}
