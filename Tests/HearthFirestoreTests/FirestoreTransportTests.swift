import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import HearthCore
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// What Hearth's gRPC transport refuses before a call reaches the service: a request over 10 MiB
/// (RESOURCE_EXHAUSTED) and a compressed one (UNIMPLEMENTED, as a gRPC server without that compression answers);
/// neither changes anything. And what a connection remembers between calls: the admin key it was shown, for
/// that value alone.
@Suite struct FirestoreTransportTests {
    @Test func aRequestOverTenMiBIsResourceExhausted() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let big = String(repeating: "x", count: 1_000_000)
                await #expect(throws: RPCError.self) {
                    do {
                        _ = try await firestore.commit((0..<11).map { firestore.set("things/\($0)", ["big": .string(big)]) })
                    } catch let error as RPCError {
                        #expect(error.code == .resourceExhausted, "\(error)")
                        throw error
                    }
                }
                // The connection still serves, and nothing was written.
                _ = try await firestore.commit([firestore.set("things/small", ["a": .int(1)])])
                let listing = try await http.get("/v1/docs/things")
                #expect(listing.text.contains("small") && !listing.text.contains("things/0"), "\(listing.text)")
            }
        }
    }

    @Test func aCompressedRequestIsUnimplemented() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            var config = HTTP2ClientTransport.Posix.Config.defaults
            config.compression = .init(algorithm: .gzip, enabledAlgorithms: .all)
            let client = GRPCClient(transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: server.grpcPort!),
                                                                  transportSecurity: .plaintext, config: config))
            let connections = Task { try await client.runConnections() }
            let stub = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var metadata: Metadata = [:]
            metadata.addString("Bearer \(server.adminKey)", forKey: "authorization")
            for method in ["Commit", "RunQuery"] {
                do {
                    if method == "Commit" {
                        _ = try await stub.commit(.with {
                            $0.database = "projects/test/databases/(default)"
                            $0.writes = [.with { $0.update = .with { $0.name = "projects/test/databases/(default)/documents/things/a" } }]
                        }, metadata: metadata)
                    } else {
                        _ = try await stub.runQuery(.with { $0.parent = "projects/test/databases/(default)/documents" },
                                                    metadata: metadata) { response in
                            for try await _ in response.messages {}
                        }
                    }
                    Issue.record("\(method) answered, expected UNIMPLEMENTED")
                } catch let error as RPCError {
                    #expect(error.code == .unimplemented, "\(method): \(error)")
                }
            }
            let listing = try await http.get("/v1/docs/things")
            #expect(!listing.text.contains("things/a"), "\(listing.text)")
            client.beginGracefulShutdown()
            _ = try? await connections.value
        }
    }

    @Test func aConnectionRemembersTheAdminKeyForThatValueAlone() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("things/a", ["a": .int(1)])])
                // The same connection, other authorization values: each is decided anew.
                for value in ["Bearer \(server.adminKey)x", "Bearer hak_nope", "Basic \(server.adminKey)"] {
                    var metadata: Metadata = [:]
                    metadata.addString(value, forKey: "authorization")
                    do {
                        _ = try await firestore.stub.commit(.with {
                            $0.database = firestore.database
                            $0.writes = [firestore.set("things/b", ["a": .int(2)])]
                        }, metadata: metadata)
                        Issue.record("\(value) was answered, expected UNAUTHENTICATED")
                    } catch let error as RPCError {
                        #expect(error.code == .unauthenticated, "\(value): \(error)")
                    }
                }
                _ = try await firestore.commit([firestore.set("things/c", ["a": .int(3)])])
                let listing = try await http.get("/v1/docs/things")
                #expect(listing.text.contains("things/c") && !listing.text.contains("things/b"), "\(listing.text)")
            }
        }
    }

    /// Names are split at their `/` bytes: an id may start with a combining mark, and a document's name comes
    /// back as it was asked for.
    @Test func batchGetAnswersEachDocumentUnderItsName() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                let paths = ["things/caf\u{E9}", "things/\u{301}e", "things/\u{65E5}\u{672C}/sub/\u{1F525}"]
                _ = try await firestore.commit(paths.map { firestore.set($0, ["a": .int(1)]) })
                let names = (paths + ["things/missing"]).map(firestore.name)
                let (found, missing) = try await firestore.stub.batchGetDocuments(.with {
                    $0.database = firestore.database
                    $0.documents = names
                }, metadata: firestore.metadata) { response in
                    var found: [String] = [], missing: [String] = []
                    for try await message in response.messages {
                        switch message.result {
                        case .found(let document)?: found.append(document.name)
                        case .missing(let name)?: missing.append(name)
                        case nil: break
                        }
                    }
                    return (found, missing)
                }
                #expect(found == Array(names.prefix(3)))
                #expect(missing == [names[3]])
            }
        }
    }

    /// Over a real socket, a peer that breaks HTTP/2 gets GOAWAY naming the fault and its connection closes; a
    /// stream it broke alone is reset; the server's other connections are served throughout.
    @Test func aBrokenFrameEndsItsConnectionWithGoAwayAndNothingElse() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            let port = try #require(server.grpcPort)
            try await FirestoreTestClient.with(port: port, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("things/a", ["a": .int(1)])])

                let raw = try RawHTTPConnection(port: port)
                try await raw.send(bytes: HTTP2Wire.preface + HTTP2Wire.frame(type: 6, flags: 0, stream: 0, Array(1...8)))
                let pong = try await raw.read { HTTP2Wire.frames($0).contains { $0.type == 6 } }
                #expect(HTTP2Wire.frames(pong).contains { $0.type == 6 && $0.flags == 1 && $0.payload == Array(1...8) })
                // A stream's fault (a second HEADERS that does not end its request) resets that stream.
                try await raw.send(bytes: HTTP2Wire.grpcRequest(stream: 1, path: "/google.firestore.v1.Firestore/Commit",
                                                                port: port, token: server.adminKey)
                                   + HTTP2Wire.headers(stream: 1, [("x-trailer", "1")]))
                let reset = try await raw.read { HTTP2Wire.frames($0).contains { $0.type == 3 } }
                #expect(HTTP2Wire.frames(reset).contains { $0.type == 3 && $0.stream == 1 && $0.payload == [0, 0, 0, 1] })
                // The connection's fault (DATA on stream 0) ends it.
                try await raw.send(bytes: HTTP2Wire.frame(type: 0, flags: 0, stream: 0, [1]))
                let goAway = try #require(HTTP2Wire.frames(try await raw.readToEnd()).last)
                #expect(goAway.type == 7 && Array(goAway.payload[4..<8]) == [0, 0, 0, 1], "PROTOCOL_ERROR")
                #expect(String(decoding: goAway.payload[8...], as: UTF8.self) == "DATA on stream 0")

                // HTTP/1.1 on the gRPC port: GOAWAY, closed.
                let http1 = try RawHTTPConnection(port: port)
                try await http1.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(HTTP2Wire.frames(try await http1.readToEnd()).map(\.type) == [4, 7])

                _ = try await firestore.commit([firestore.set("things/b", ["a": .int(2)])])
                #expect(try await http.get("/v1/docs/things/b").status == 200)
            }
        }
    }

    /// A peer that opens calls and never finishes their requests holds at most four requests' worth of the
    /// server's memory per connection: the call whose bytes pass that fails with RESOURCE_EXHAUSTED. And a unary
    /// call that is sent a second message fails at once, before the request ends.
    @Test func aConnectionsUnfinishedRequestsAreBoundedInBytes() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            let port = try #require(server.grpcPort)
            let commit = "/google.firestore.v1.Firestore/Commit"
            let raw = try RawHTTPConnection(port: port, timeout: 30)
            try await raw.send(bytes: HTTP2Wire.preface)
            let piece = [UInt8](repeating: 0, count: 16_384)
            for stream in stride(from: UInt32(1), through: 9, by: 2) {
                // A message announced at 10 MiB, of which 9 MiB come.
                try await raw.send(bytes: HTTP2Wire.grpcRequest(stream: stream, path: commit, port: port, token: server.adminKey)
                                   + HTTP2Wire.frame(type: 0, flags: 0, stream: stream, [0, 0, 0xA0, 0, 0] + piece.dropFirst(5)))
                for _ in 1..<(9 * 64) { try await raw.send(bytes: HTTP2Wire.frame(type: 0, flags: 0, stream: stream, piece)) }
            }
            let answer = try await raw.read { HTTP2Wire.frames($0).contains { $0.type == 1 && $0.flags & 1 == 1 } }
            let trailers = try #require(HTTP2Wire.frames(answer).first { $0.type == 1 && $0.flags & 1 == 1 })
            #expect(trailers.stream == 9)
            #expect(String(decoding: trailers.payload, as: UTF8.self).contains("grpc-status\u{1}8"), "RESOURCE_EXHAUSTED")

            let twice = try RawHTTPConnection(port: port)
            let request = try Google_Firestore_V1_CommitRequest.with {
                $0.database = "projects/p/databases/(default)"
            }.serializedBytes() as [UInt8]
            try await twice.send(bytes: HTTP2Wire.preface + HTTP2Wire.grpcRequest(stream: 1, path: commit, port: port, token: server.adminKey)
                                 + HTTP2Wire.grpcMessage(stream: 1, request) + HTTP2Wire.grpcMessage(stream: 1, request))
            let refused = try await twice.read { HTTP2Wire.frames($0).contains { $0.type == 1 && $0.flags & 1 == 1 } }
            let status = try #require(HTTP2Wire.frames(refused).first { $0.type == 1 && $0.flags & 1 == 1 })
            #expect(String(decoding: status.payload, as: UTF8.self).contains("grpc-status\u{2}13"), "INTERNAL")
            #expect(try await http.get("/v1/docs/things").text.contains("documents"))
        }
    }

    /// The gRPC port holds connections to the HTTP port's timeouts: one that never sends HTTP/2's preface is
    /// closed after the request-head timeout, with nothing but the server's SETTINGS; one with no call open is
    /// sent GOAWAY (NO_ERROR) after the idle timeout, then closed, as gRPC servers end idle connections; one with a
    /// Listen stream open is never idle, and is served after several idle timeouts.
    @Test func connectionsWithoutCallsAreClosedAfterTheTimeouts() async throws {
        try await TestServer.with(configure: {
            $0.grpcPort = 0
            // Short, yet long enough that a busy machine (the whole suite runs at once) does not trip them.
            $0.connections.idleTimeout = .milliseconds(1_500)
            $0.connections.requestHeadTimeout = .milliseconds(1_500)
        }) { server, _ in
            let port = try #require(server.grpcPort)
            let silent = try RawHTTPConnection(port: port)
            #expect(HTTP2Wire.frames(try await silent.readToEnd()).map(\.type) == [4])

            let idle = try RawHTTPConnection(port: port)
            try await idle.send(bytes: HTTP2Wire.preface + HTTP2Wire.frame(type: 4, flags: 0, stream: 0, []))
            let frames = HTTP2Wire.frames(try await idle.readToEnd())
            let goAway = try #require(frames.last)
            #expect(goAway.type == 7 && Array(goAway.payload[4..<8]) == [0, 0, 0, 0], "NO_ERROR: \(frames.map(\.type))")
            #expect(String(decoding: goAway.payload[8...], as: UTF8.self) == "idle")

            let database = "projects/p/databases/(default)"
            let request = try Google_Firestore_V1_ListenRequest.with {
                $0.database = database
                $0.addTarget = .with {
                    $0.targetID = 1
                    $0.documents = .with { $0.documents = ["\(database)/documents/things/a"] }
                }
            }.serializedBytes() as [UInt8]
            let listening = try RawHTTPConnection(port: port)
            try await listening.send(bytes: HTTP2Wire.preface + HTTP2Wire.frame(type: 4, flags: 0, stream: 0, [])
                                     + HTTP2Wire.grpcRequest(stream: 1, path: "/google.firestore.v1.Firestore/Listen",
                                                             port: port, token: server.adminKey)
                                     + HTTP2Wire.grpcMessage(stream: 1, request))
            _ = try await listening.read { HTTP2Wire.frames($0).contains { $0.type == 0 && $0.stream == 1 } }
            try await Task.sleep(for: .milliseconds(4_000))
            // (Over a connection of its own: the test's HTTP client's has been closed for idling meanwhile.)
            try await FirestoreTestClient.with(port: port, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("things/a", ["late": .bool(true)])])
            }
            let later = try await listening.read { bytes in
                HTTP2Wire.frames(bytes).contains { $0.type == 7 || ($0.type == 0 && $0.stream == 1 && $0.payload.count > 5) }
            }
            #expect(!HTTP2Wire.frames(later).contains { $0.type == 7 }, "no GOAWAY while a call is open")
        }
    }
}
