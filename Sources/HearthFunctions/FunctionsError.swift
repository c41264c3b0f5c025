import Foundation

/// What the kit refuses: a delivery whose signature or timestamp does not verify, a secret that cannot be
/// read, or a body that is not an event. `FunctionsResponder` answers the first `401`, the last `400`.
public struct FunctionsError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        case signature
        case event
    }

    let code: Code
    /// What was wrong, for the answer and the log.
    public let message: String

    /// A delivery (or a secret) that does not verify.
    public static func signature(_ message: String) -> FunctionsError { FunctionsError(code: .signature, message: message) }
    /// A body that is not an event.
    public static func event(_ message: String) -> FunctionsError { FunctionsError(code: .event, message: message) }

    /// Whether the signature, its timestamp or the secret was refused (rather than the body).
    public var isSignature: Bool { code == .signature }
    /// The message.
    public var description: String { message }
}
