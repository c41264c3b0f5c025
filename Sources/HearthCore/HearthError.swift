/// The one error type of Hearth: a Firestore-style code and a message that says what went wrong and where.
///
/// Every module reports failures as `HearthError`; the server maps the code to an HTTP status in one place.
public struct HearthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The Firestore-style error codes Hearth answers with.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidArgument = "invalid-argument"
        case failedPrecondition = "failed-precondition"
        case unauthenticated
        case permissionDenied = "permission-denied"
        case notFound = "not-found"
        case alreadyExists = "already-exists"
        case aborted
        case payloadTooLarge = "payload-too-large"
        case unsupportedMediaType = "unsupported-media-type"
        /// A well-formed request the server will not carry out as sent (an `Idempotency-Key` reused with another request).
        case unprocessableContent = "unprocessable-content"
        case resourceExhausted = "resource-exhausted"
        case deadlineExceeded = "deadline-exceeded"
        case `internal`
        case unavailable
    }

    /// The error's code.
    public let code: Code
    /// A human-readable message naming what was wrong and where.
    public let message: String
    /// Seconds the client should wait before retrying, where that is known (rate limits).
    public var retryAfter: Int?

    /// Makes an error with a code and a message.
    public init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// A request or value is malformed.
    public static func invalidArgument(_ message: String) -> HearthError { .init(.invalidArgument, message) }
    /// A precondition on the stored state did not hold.
    public static func failedPrecondition(_ message: String) -> HearthError { .init(.failedPrecondition, message) }
    /// The caller is not signed in, or its credentials are no longer valid.
    public static func unauthenticated(_ message: String) -> HearthError { .init(.unauthenticated, message) }
    /// The caller may not do this.
    public static func permissionDenied(_ message: String = "Missing or insufficient permissions.") -> HearthError {
        .init(.permissionDenied, message)
    }
    /// The document or resource does not exist.
    public static func notFound(_ message: String) -> HearthError { .init(.notFound, message) }
    /// The document or resource exists already.
    public static func alreadyExists(_ message: String) -> HearthError { .init(.alreadyExists, message) }
    /// A transaction conflicted with another write; retry it.
    public static func aborted(_ message: String) -> HearthError { .init(.aborted, message) }
    /// A body or document is over its size limit.
    public static func payloadTooLarge(_ message: String) -> HearthError { .init(.payloadTooLarge, message) }
    /// A quota or rate limit was exceeded.
    public static func resourceExhausted(_ message: String, retryAfter: Int? = nil) -> HearthError {
        .init(.resourceExhausted, message, retryAfter: retryAfter)
    }
    /// An unexpected failure; the message is safe to show and leaks no internals.
    public static func `internal`(_ message: String = "Internal error.") -> HearthError { .init(.internal, message) }
    /// The service is shutting down or cannot serve right now.
    public static func unavailable(_ message: String) -> HearthError { .init(.unavailable, message) }
}
