import HearthCore
import Hummingbird
import Logging

/// The one request log and metrics path of the HTTP ways in (the router, through `RecordingMiddleware`, and
/// the event-loop fast path): a `Request` line when a request is taken (at the request log level, tagged
/// with its id), and its route, method, status and latency counted when it is answered.
struct RequestRecorder: Sendable {
    let metrics: ServerMetrics
    /// The level of the `Request` lines.
    let level: Logger.Level

    /// Writes a request's `Request` line on its logger, giving the logger a request id first when it has none
    /// (the router's loggers come with one).
    func log(_ method: HTTPRequest.Method, _ path: String, on logger: inout Logger) {
        guard logger.logLevel <= level else { return }
        if logger[metadataKey: "hb.request.id"] == nil {
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        }
        logger.log(level: level, "Request", metadata: ["hb.request.path": .string(path), "hb.request.method": .string(method.rawValue)])
    }

    /// Counts an answered request.
    func answered(route: String, _ method: HTTPRequest.Method, _ status: HTTPResponse.Status, since start: ContinuousClock.Instant) {
        metrics.record(route: route, method: method, status: status, duration: .now - start)
    }
}

/// The router's side of `RequestRecorder`: every routed request is logged, then counted with the status of
/// its answer (an error's too, as `ErrorMiddleware` maps it).
struct RecordingMiddleware<Context: RequestContext>: RouterMiddleware {
    let recorder: RequestRecorder

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var logger = context.logger
        recorder.log(request.method, redactingSecrets(request.uri.description), on: &logger)
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = ErrorMiddleware<Context>.response(for: error, request: request, logger: context.logger)
        }
        recorder.answered(route: context.endpointPath ?? "unmatched", request.method, response.status, since: start)
        return response
    }
}

/// A request target as it may be logged: the value of a `token` query parameter (a download token, which
/// works without any other credential) and of a `code` (an account link's one-time code) replaced by `<redacted>`.
func redactingSecrets(_ target: String) -> String {
    guard let query = target.firstIndex(of: "?") else { return target }
    let parameters = target[target.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { pair in
        pair.hasPrefix("token=") ? "token=<redacted>" : pair.hasPrefix("code=") ? "code=<redacted>" : String(pair)
    }
    return target[...query] + parameters.joined(separator: "&")
}
