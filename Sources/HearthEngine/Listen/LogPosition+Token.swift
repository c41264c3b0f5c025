import HearthCore

extension LogPosition {
    /// The opaque resume token naming this position.
    public var resumeToken: String {
        Base64.encode(Array("\(sequence):\(commitTime.microseconds)".utf8))
    }

    /// Reads a resume token this server issued.
    public init(resumeToken token: String) throws(HearthError) {
        guard let bytes = Base64.decode(token), let text = String(validating: bytes, as: UTF8.self) else {
            throw .invalidArgument("resumeToken '\(token.prefix(64))' is not a token this server issued")
        }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let sequence = Int64(parts[0]), let micros = Int64(parts[1]), sequence >= 0 else {
            throw .invalidArgument("resumeToken '\(token.prefix(64))' is not a token this server issued")
        }
        self.init(sequence: sequence, commitTime: Timestamp(microseconds: micros))
    }
}
