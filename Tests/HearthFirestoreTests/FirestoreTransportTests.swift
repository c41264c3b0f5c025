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
}
