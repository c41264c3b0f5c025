import HearthCore
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

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
        case is NIOTooManyBytesError:
            // A body collected without `Content-Length` (chunked) and over the limit it was collected with.
            return .payloadTooLarge("request body is over \(Limits.maxRequestBody) bytes (10 MiB)")
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

/// The HTTP status for each error code (docs/api.md, Errors).
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
    case .unprocessableContent: return .unprocessableContent
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

/// The answer to a request refused at the connection, before any route (`ConnectionGuard`), in the one error
/// shape: `400 invalid-argument` naming what is wrong, or `431` for a head over the limits, also
/// `invalid-argument`: the same request will never pass (`resource-exhausted` would say "try later").
func malformedRequestReply(_ error: HTTPParserError) -> JSONReply {
    guard error != .headerOverflow else {
        var reply = errorReply(.invalidArgument(
            "request head too large: at most \(Limits.maxRequestHeadBytes) bytes of request line and header fields, "
                + "and at most \(Limits.maxRequestHeaderFields) header fields"))
        reply.status = .requestHeaderFieldsTooLarge
        return reply
    }
    let detail: String
    switch error {
    case .unexpectedContentLength: detail = "Content-Length given twice, or with Transfer-Encoding"
    // Also the parser's answer to a Content-Length after Transfer-Encoding (the other order is `.unknown`).
    case .invalidContentLength: detail = "Content-Length is not a length, or comes with Transfer-Encoding"
    case .invalidChunkSize: detail = "a chunk of the chunked body has a malformed size"
    case .invalidMethod: detail = "not a request line of a known method"
    case .invalidURL: detail = "malformed request target"
    case .invalidVersion: detail = "not HTTP/1.0 or HTTP/1.1"
    case .invalidHeaderToken: detail = "malformed header field"
    case .invalidEOFState: detail = "the request ended early"
    // The parser's catch-all, in practice a Transfer-Encoding it refuses.
    case .unknown: detail = "Transfer-Encoding with Content-Length, a transfer coding other than chunked, or a line not ending in CRLF"
    default: detail = "\(error)"
    }
    return errorReply(.invalidArgument("malformed HTTP request: \(detail)"))
}

/// The `408` for a request that did not arrive in time (`deadline-exceeded`, which names the wait).
func requestTimeoutReply(head: Bool, after timeout: Duration) -> JSONReply {
    let what = head ? "the request head did not arrive whole" : "the request body made no progress"
    var reply = errorReply(HearthError(.deadlineExceeded, "\(what) within \(timeout)"))
    reply.status = .requestTimeout
    return reply
}
