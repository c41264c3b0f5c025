import Foundation
import HearthCore
import HearthServer
import HearthTesting
import Testing

/// Function endpoints over HTTPS: one behind a private certificate authority receives its events once the
/// server trusts that authority (`functionsCaFile`); without it, the event waits, its last error the TLS failure.
@Suite struct FunctionsTLSTests {
    static func with(trusted: Bool, _ body: (TestHTTPEndpoint, HearthClient) async throws -> Void) async throws {
        let certificate = try await TestCertificate.make(name: "endpoint")
        let endpoint = try await TestHTTPEndpoint.start(tls: certificate) { _ in .init(status: 204) }
        try await withCleanup({
            let file = try FunctionsDeliveryTests.functionsFile(url: "https://localhost:\(endpoint.port)/hooks",
                                                                secret: FunctionsDeliveryTests.secret())
            var functions = FunctionsSettings()
            if trusted { try functions.trust(caFile: certificate.certificate) }
            try await TestServer.with(configure: { configuration in
                configuration.useFunctions(file: file)
                configuration.functions = functions
            }) { _, client in
                #expect(try await client.put("/v1/docs/posts/p1", #"{"title": "over TLS"}"#).status == 200)
                try await body(endpoint, client)
            }
        }) { await endpoint.stop() }
    }

    @Test func anEndpointBehindATrustedAuthorityReceivesItsEvents() async throws {
        try await Self.with(trusted: true) { endpoint, client in
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            let requests = endpoint.received
            #expect(requests.count == 1)
            let request = try #require(requests.first)
            #expect(request.method == "POST" && request.path == "/hooks")
            #expect(request.headers["webhook-id"]?.hasPrefix("evt_") == true && request.headers["webhook-signature"]?.hasPrefix("v1,") == true)
            let event = try JSON.parse(request.body)
            #expect(event["name"]?.stringValue == "postWritten")
            #expect(event["document"]?["after"]?["data"]?["title"]?.stringValue == "over TLS")
        }
    }

    @Test func anUntrustedEndpointGetsNothingAndTheEventWaits() async throws {
        try await Self.with(trusted: false) { endpoint, client in
            let pending = try await client.functionEvents("pending") { events in
                events.count == 1 && events[0]["lastError"]?.stringValue?.hasPrefix("TLS: ") == true
            }
            #expect(pending.count == 1)
            #expect(endpoint.received.isEmpty)
        }
    }
}
