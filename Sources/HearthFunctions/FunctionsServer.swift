import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Serves your handlers over HTTP with Hummingbird: one `POST` route, on its own or inside your app.
///
/// ```swift
/// try await FunctionsServer(secret: secret, functions: functions).run(port: 9000)
/// ```
public struct FunctionsServer: Sendable {
    /// The route's path (the path of the endpoint's `url` in the functions file).
    public let path: String
    /// The largest body accepted: an event holds a document twice, each up to 1 MiB.
    public var maxBodyBytes = 8 << 20
    let responder: FunctionsResponder

    /// Serves `functions` at `path` to deliveries signed with `secret` (`whsec_...`); a malformed secret throws.
    public init(secret: String, path: String = "/hooks", functions: Functions) throws {
        responder = try FunctionsResponder(secret: secret, functions: functions)
        self.path = path
    }

    /// Adds the route to your router, or to a group of it (`router.group("api")`).
    public func addRoutes<Context: RequestContext>(to router: some RouterMethods<Context>) {
        let responder = responder, maxBodyBytes = maxBodyBytes
        router.post(RouterPath(path)) { request, context -> Response in
            let body = try await request.body.collect(upTo: maxBodyBytes)
            let answer = await responder.answer(header: { name in
                HTTPField.Name(name).flatMap { request.headers[$0] }
            }, body: Array(body.readableBytesView))
            var headers = HTTPFields()
            if !answer.body.isEmpty { headers[.contentType] = "application/json" }
            return Response(status: HTTPResponse.Status(code: answer.status), headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
    }

    /// A Hummingbird application serving only the route, on `host:port`.
    public func application(host: String = "127.0.0.1", port: Int, logger: Logger? = nil) -> some ApplicationProtocol {
        let router = Router()
        addRoutes(to: router)
        return Application(router: router, configuration: .init(address: .hostname(host, port: port)),
                           logger: logger ?? Logger(label: "hearth-functions"))
    }

    /// Runs until SIGINT or SIGTERM (or the task is cancelled), serving on `host:port`.
    public func run(host: String = "127.0.0.1", port: Int, logger: Logger? = nil) async throws {
        try await application(host: host, port: port, logger: logger).runService()
    }
}
