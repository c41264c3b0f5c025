import Foundation
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// A gRPC Listen client that stops reading costs the server a bounded queue, not memory without end, and does
/// not hold up the other streams: HTTP/2 flow control stops its bytes, its responses stop being taken once
/// enough of them wait, its events wait in the feed connection's bounded queue, and a full queue ends the stream.
@Suite struct FirestoreListenSlowReaderTests {
    @Test func aStreamThatStopsReadingIsEndedWhileOthersAreServed() async throws {
        try await TestServer.with(configure: {
            $0.grpcPort = 0
            $0.listen.maxQueuedEvents = 8
        }) { server, http in
            let grpcPort = try #require(server.grpcPort)
            // Each first snapshot carries a 100 KB document: the stream's 64 KiB window holds less than one.
            #expect(try await http.put("/v1/docs/big/one", #"{"text": "\#(String(repeating: "x", count: 100_000))"}"#).status == 200)
            try await FirestoreTestClient.with(port: grpcPort, token: server.adminKey) { firestore in
                let healthy = firestore.listen()
                healthy.send(FirestoreListenTests.queryTarget(firestore, id: 1, collection: "fans"))
                _ = try await healthy.nextSnapshot()
                #expect(server.services.feed.openConnections == 1)

                // A client that sends its request and never reads (the socket's buffer kept small).
                let raw = try RawHTTPConnection(port: grpcPort, timeout: 30, receiveBuffer: 65_536)
                try await raw.send(bytes: HTTP2Wire.preface + HTTP2Wire.grpcRequest(
                    stream: 1, path: "/google.firestore.v1.Firestore/Listen", port: grpcPort, token: server.adminKey))
                try await Self.waitUntil { server.services.feed.openConnections == 2 }
                // Targets one at a time: first snapshots never merge, so each takes a place in the queue once the
                // stream's responses stop being taken.
                let limit = ListenConfiguration().maxTargetsPerConnection
                for id in 1...Int32(limit) where server.services.feed.openConnections == 2 {
                    let request = Google_Firestore_V1_ListenRequest.with {
                        $0.database = firestore.database
                        $0.addTarget = .with { $0.targetID = id; $0.documents = .with { $0.documents = [firestore.name("big/one")] } }
                    }
                    try await raw.send(bytes: HTTP2Wire.grpcMessage(stream: 1, try request.serializedBytes()))
                    try await Task.sleep(for: .milliseconds(20))
                }
                // The server gave up on the stream before the client's targets ran out, while it still reads nothing.
                try await Self.waitUntil { server.services.feed.openConnections == 1 }

                // The other stream is served as before.
                #expect(try await http.put("/v1/docs/fans/a", #"{"n": 1}"#).status == 200)
                #expect(FirestoreListenTests.changedIDs(try await healthy.nextSnapshot()) == ["a"])
                await healthy.close()
            }
        }
    }

    static func waitUntil(_ condition: () -> Bool, seconds: Double = 30) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ListenClient.Failure(description: "timed out waiting") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
