/// One job in a group commit.
final class WriteJobState {
    let context: WriteContext
    var failed = false
    var onCommit: ((_ error: (any Error)?) -> Void)?

    init(context: WriteContext) { self.context = context }
}
