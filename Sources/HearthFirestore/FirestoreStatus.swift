import GRPCCore
import HearthCore
import Logging

/// Hearth's errors as gRPC statuses with Firestore's meanings. An over-size document is INVALID_ARGUMENT, as
/// Firestore answers it; an internal failure is logged and answered without its details.
enum FirestoreStatus {
    static func rpcError(_ error: any Error, logger: Logger) -> RPCError {
        if let rpc = error as? RPCError { return rpc }
        guard let hearth = error as? HearthError else {
            logger.error("gRPC request failed", metadata: ["error": "\(error)"])
            return RPCError(code: .internalError, message: "Internal error.")
        }
        return RPCError(code: code(hearth.code), message: hearth.message)
    }

    static func code(_ code: HearthError.Code) -> RPCError.Code {
        switch code {
        case .invalidArgument, .payloadTooLarge, .unsupportedMediaType, .unprocessableContent: return .invalidArgument
        case .failedPrecondition: return .failedPrecondition
        case .unauthenticated: return .unauthenticated
        case .permissionDenied: return .permissionDenied
        case .notFound: return .notFound
        case .alreadyExists: return .alreadyExists
        case .aborted: return .aborted
        case .resourceExhausted: return .resourceExhausted
        case .deadlineExceeded: return .deadlineExceeded
        case .internal: return .internalError
        case .unavailable: return .unavailable
        }
    }

    /// The answer for an RPC Hearth does not serve.
    static func unimplemented(_ what: String) -> RPCError {
        RPCError(code: .unimplemented, message: "\(what) is not served by Hearth (docs/firestore-compat.md)")
    }
}
