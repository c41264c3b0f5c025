/// What went wrong in a call of the client: the API's error (`{"error": {"code", "message"}}` with its HTTP
/// status), or a failure on this side (a value that does not encode, an answer that does not decode, the
/// connection). `code` uses the API's codes (docs/api.md, Errors) either way.
public struct HearthClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The API's error codes (Firestore's, plus `payload-too-large` and `unsupported-media-type`).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidArgument = Code(rawValue: "invalid-argument")
        public static let failedPrecondition = Code(rawValue: "failed-precondition")
        public static let unauthenticated = Code(rawValue: "unauthenticated")
        public static let permissionDenied = Code(rawValue: "permission-denied")
        public static let notFound = Code(rawValue: "not-found")
        public static let alreadyExists = Code(rawValue: "already-exists")
        public static let aborted = Code(rawValue: "aborted")
        public static let payloadTooLarge = Code(rawValue: "payload-too-large")
        public static let resourceExhausted = Code(rawValue: "resource-exhausted")
        public static let deadlineExceeded = Code(rawValue: "deadline-exceeded")
        public static let unsupportedMediaType = Code(rawValue: "unsupported-media-type")
        public static let unprocessableContent = Code(rawValue: "unprocessable-content")
        public static let `internal` = Code(rawValue: "internal")
        public static let unavailable = Code(rawValue: "unavailable")
        /// An answer this client could not read (not one of the API's codes).
        public static let dataLoss = Code(rawValue: "data-loss")
    }

    /// The error's code.
    public var code: Code
    /// What was wrong, as the server (or the client) said it.
    public var message: String
    /// The HTTP status of the answer, or nil when the error arose in the client or on a live-update connection.
    public var status: Int?
    /// Seconds to wait before trying again, when the server said so (`Retry-After`).
    public var retryAfter: Int?

    public init(code: Code, message: String, status: Int? = nil, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
    }

    public var description: String {
        (status.map { "\($0) " } ?? "") + "\(code.rawValue): \(message)"
    }

    /// A value or document the client cannot put into the wire encoding.
    static func encoding(_ message: String) -> HearthClientError { .init(code: .invalidArgument, message: message) }

    /// An answer (or a document) the client cannot read.
    static func decoding(_ message: String) -> HearthClientError { .init(code: .dataLoss, message: message) }
}
