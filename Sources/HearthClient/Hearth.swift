@_exported import struct HearthCore.GeoPoint
@_exported import struct HearthCore.Timestamp
@_exported import enum HearthCore.Value
import AsyncHTTPClient
import Foundation
import HearthCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// A connection to a Hearth server's HTTP API (docs/client.md): the entry point, as `Firestore` is in
/// Firebase's SDK. It holds the credentials it calls with: none, a bearer token (the admin key, or a
/// user's access token handed over, e.g. a function's event token), or a session signed in through `auth`.
public final class Hearth: Sendable {
    /// The server's base URL (`http://127.0.0.1:8080`).
    public let url: URL
    let transport: Transport
    let credentials: Credentials
    /// How many listen connections this client's listeners have opened (upgrades done), for tests.
    let listenConnections = NIOLockedValueBox(0)
    var openedListenConnections: Int { listenConnections.withLockedValue { $0 } }

    /// A client calling with `token` as its bearer token (or without credentials); `httpClient` defaults to
    /// AsyncHTTPClient's shared client. `timeout` bounds each call, connecting included (AsyncHTTPClient
    /// keeps trying to connect to a server that refuses until then).
    public init(url: URL, token: String? = nil, httpClient: HTTPClient = .shared, timeout: Duration = .seconds(60)) {
        self.url = url
        let seconds = timeout.components
        transport = Transport(baseURL: url, http: httpClient,
                              timeout: .nanoseconds(seconds.seconds * 1_000_000_000 + seconds.attoseconds / 1_000_000_000))
        credentials = Credentials(mode: token.map { .bearer($0) } ?? .none, transport: transport)
    }

    /// A client acting as the owner: the server's admin key bypasses rules (for servers and tools, never apps).
    public convenience init(url: URL, adminKey: String, httpClient: HTTPClient = .shared, timeout: Duration = .seconds(60)) {
        self.init(url: url, token: adminKey, httpClient: httpClient, timeout: timeout)
    }

    /// Accounts: sign up, sign in, refresh, sign out.
    public var auth: Accounts { Accounts(hearth: self) }

    /// The collection at a path of odd length (`posts`, `users/alice/notes`).
    public func collection(_ path: String) -> CollectionReference {
        CollectionReference(hearth: self, path: Self.trimmed(path))
    }

    /// The document at a path of even length (`posts/p1`).
    public func document(_ path: String) -> DocumentReference {
        DocumentReference(hearth: self, path: Self.trimmed(path))
    }

    /// A query of every collection with this id, at any depth (Firestore's collection group).
    public func collectionGroup(_ collectionID: String) -> Query {
        Query(hearth: self, source: .group(collectionID, under: nil))
    }

    static func trimmed(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }

    /// Calls the API with the client's credentials. A session's expired or replaced token is refreshed and the
    /// call made once more.
    func call(_ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: JSON? = nil,
              headers: [(String, String)] = []) async throws(HearthClientError) -> Transport.Answer {
        let token = try await credentials.token()
        do throws(HearthClientError) {
            return try await transport.send(method, path, query: query, body: body, token: token, headers: headers)
        } catch {
            guard error.code == .unauthenticated, error.status == 401, case .session = await credentials.mode, let token else { throw error }
            let fresh = try await credentials.refresh(replacing: token)
            return try await transport.send(method, path, query: query, body: body, token: fresh.accessToken, headers: headers)
        }
    }

    /// Commits writes atomically (`POST /v1/commit`), within a transaction when one is named.
    @discardableResult
    func commit(_ writes: [JSON], transaction: String? = nil) async throws(HearthClientError) -> CommitResult {
        var body: [(String, JSON)] = [("writes", .array(writes))]
        if let transaction { body.append(("transaction", .string(transaction))) }
        let answer = try await call(.POST, "/v1/commit", body: .object(body))
        return try CommitResult(json: answer.body)
    }
}

/// What a commit answered: each write's update time (nil after a delete) and transform results, and the
/// commit time.
public struct CommitResult: Sendable {
    public struct WriteResult: Sendable {
        public var updateTime: Timestamp?
        public var transformResults: [Value]
    }

    public var writeResults: [WriteResult]
    public var commitTime: Timestamp

    init(json: JSON?) throws(HearthClientError) {
        guard let json, case .array(let results)? = json["writeResults"],
              let commitTime = json["commitTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
            throw .decoding("the commit's answer lacks its results")
        }
        var out: [WriteResult] = []
        for result in results {
            var transforms: [Value] = []
            if case .array(let items)? = result["transformResults"] {
                for item in items {
                    do { transforms.append(try Value(wire: item)) } catch { throw .decoding("a transform result: \(error.message)") }
                }
            }
            out.append(WriteResult(updateTime: result["updateTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
                                   transformResults: transforms))
        }
        writeResults = out
        self.commitTime = commitTime
    }
}
