import Foundation
import HearthTesting
import NIOCore
import Testing
@testable import HearthServer

/// The client that posts function events, against loopback endpoints: answers read one after another (the
/// connection kept between them), and each failure described as delivery records it.
@Suite struct WebhookClientTests {
    static func post(_ client: WebhookClient, _ url: String, maxAnswerBytes: Int = 1 << 20) async throws -> (Int, String) {
        let (status, answer) = try await client.post(URL(string: url)!, headers: [("content-type", "application/json")],
                                                     body: Array(#"{"id": "evt_1"}"#.utf8), timeout: .seconds(30),
                                                     maxAnswerBytes: maxAnswerBytes)
        return (status, String(decoding: answer.readableBytesView, as: UTF8.self))
    }

    @Test func postsAreAnsweredOneAfterAnother() async throws {
        let endpoint = try await TestHTTPEndpoint.start { request in
            .init(status: request.path == "/hooks?a=1" ? 200 : 404, body: Array("\(request.method) \(request.body.count)".utf8))
        }
        let client = WebhookClient(connectTimeout: .seconds(10), keepIdle: 2)
        for _ in 0..<3 {
            let (status, text) = try await Self.post(client, "http://127.0.0.1:\(endpoint.port)/hooks?a=1")
            #expect(status == 200 && text == "POST 15")
        }
        #expect(try await Self.post(client, "http://127.0.0.1:\(endpoint.port)/other").0 == 404)
        client.shutdown()
        await endpoint.stop()
    }

    /// Each failure as delivery records it (the event's `lastError`).
    @Test func failuresAreDescribed() async throws {
        let endpoint = try await TestHTTPEndpoint.start { _ in .init(status: 200, body: Array(repeating: 120, count: 2000)) }
        let certificate = try await TestCertificate.make(name: "webhook")
        let untrusted = try await TestHTTPEndpoint.start(tls: certificate) { _ in .init(status: 200) }
        let unreachable = try UnreachablePort()
        let client = WebhookClient(connectTimeout: .seconds(10), keepIdle: 2)
        let cases: [(url: String, limit: Int, starts: String)] = [
            ("http://127.0.0.1:\(endpoint.port)/hooks", 1024, "the answer is larger than 1024 bytes"),
            ("http://127.0.0.1:\(unreachable.port)/hooks", 1024, "connection refused"),
            ("https://localhost:\(untrusted.port)/hooks", 1024, "TLS: "),
        ]
        for (url, limit, starts) in cases {
            do {
                _ = try await Self.post(client, url, maxAnswerBytes: limit)
                Issue.record("\(url) answered")
            } catch {
                #expect("\(error)".hasPrefix(starts), "\(url): \(error)")
            }
        }
        client.shutdown()
        await endpoint.stop()
        await untrusted.stop()
    }
}
