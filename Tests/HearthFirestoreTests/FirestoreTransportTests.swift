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
/// neither changes anything.
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
}
