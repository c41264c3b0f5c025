import HearthCore
import Hummingbird
import Logging

/// The one place errors become HTTP: every failure leaves as `{"error": {"code", "message"}}` with its
/// status. Unknown errors become a 500 that names the request id and is logged, never leaking internals.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.response(for: error, request: request, logger: context.logger)
        }
    }

    static func response(for error: any Error, request: Request, logger: Logger) -> Response {
        errorResponse(hearthError(for: error, method: request.method, path: request.uri.path, logger: logger))
    }

    /// The error a client sees for any failure; unknown errors are logged and replaced by an opaque one.
    static func hearthError(for error: any Error, method: HTTPRequest.Method, path: String, logger: Logger) -> HearthError {
        switch error {
        case let e as HearthError:
            if e.code == .internal { logger.error("internal error", metadata: ["error": "\(e.message)"]) }
            return e
        case let e as HTTPError:
            return translate(e, method: method, path: path)
        default:
            let requestID = logger[metadataKey: "hb.request.id"].map { "\($0)" } ?? "unknown"
            logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            return .internal("Internal error (request id \(requestID)).")
        }
    }

    static func translate(_ error: HTTPError, method: HTTPRequest.Method, path: String) -> HearthError {
        switch error.status {
        case .notFound: return .notFound("no route for \(method) \(path)")
        case .contentTooLarge: return .payloadTooLarge("request body is over \(Limits.maxRequestBody) bytes (10 MiB)")
        case .methodNotAllowed: return .init(.invalidArgument, "method \(method) is not allowed on \(path)")
        case .badRequest: return .invalidArgument(error.body ?? "bad request")
        default: return .init(.internal, error.body ?? "\(error.status)")
        }
    }
}

/// The HTTP status for each error code (DESIGN §3).
func httpStatus(_ code: HearthError.Code) -> HTTPResponse.Status {
    switch code {
    case .invalidArgument: return .badRequest
    case .failedPrecondition: return .preconditionFailed
    case .unauthenticated: return .unauthorized
    case .permissionDenied: return .forbidden
    case .notFound: return .notFound
    case .alreadyExists, .aborted: return .conflict
    case .payloadTooLarge: return .contentTooLarge
    case .unsupportedMediaType: return .unsupportedMediaType
    case .resourceExhausted: return .tooManyRequests
    case .deadlineExceeded: return .gatewayTimeout
    case .internal: return .internalServerError
    case .unavailable: return .serviceUnavailable
    }
}

/// Builds the error response for an error.
func errorResponse(_ error: HearthError) -> Response {
    errorReply(error).response
}

/// The one error shape, `{"error": {"code", "message"}}`, with its status and headers.
func errorReply(_ error: HearthError) -> JSONReply {
    var w = JSONWriter()
    w.raw("{\"error\":{\"code\":")
    w.string(error.code.rawValue)
    w.raw(",\"message\":")
    w.string(error.message)
    w.raw("}}")
    var reply = JSONReply(w.bytes, status: httpStatus(error.code))
    if let retry = error.retryAfter { reply.headers[.retryAfter] = String(retry) }
    if error.code == .unauthenticated { reply.headers[.wwwAuthenticate] = "Bearer" }
    return reply
}
