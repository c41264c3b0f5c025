import HearthCore
@testable import HearthServer
import HearthTesting
import Hummingbird
import Logging
import Testing

/// Every error code leaves in the one shape with its documented status.
@Suite struct ErrorShapeTests {
    @Test func everyCodeHasItsStatus() {
        let expected: [HearthError.Code: Int] = [
            .invalidArgument: 400, .failedPrecondition: 412, .unauthenticated: 401, .permissionDenied: 403,
            .notFound: 404, .alreadyExists: 409, .aborted: 409, .payloadTooLarge: 413, .unsupportedMediaType: 415,
            .unprocessableContent: 422,
            .resourceExhausted: 429, .deadlineExceeded: 504, .internal: 500, .unavailable: 503,
        ]
        #expect(Set(expected.keys) == Set(HearthError.Code.allCases))
        for (code, status) in expected {
            let response = errorResponse(HearthError(code, "something about \(code)", retryAfter: code == .resourceExhausted ? 7 : nil))
            #expect(Int(response.status.code) == status, "\(code)")
            #expect(response.headers[.contentType] == "application/json")
            if code == .resourceExhausted { #expect(response.headers[.retryAfter] == "7") }
            if code == .unauthenticated { #expect(response.headers[.wwwAuthenticate] == "Bearer") }
        }
    }

    @Test func unknownErrorsBecomeAnOpaque500() {
        struct Secret: Error { let sql = "SELECT * FROM users WHERE token = 'hat_secret'" }
        var logger = Logger(label: "test")
        logger[metadataKey: "hb.request.id"] = "req-42"
        let error = ErrorMiddleware<HearthRequestContext>.hearthError(for: Secret(), method: .get, path: "/v1/docs/a/b", logger: logger)
        #expect(error.code == .internal)
        #expect(error.message == "Internal error (request id req-42).")
    }
}
