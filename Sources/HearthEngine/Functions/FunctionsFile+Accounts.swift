import HearthAuth
import HearthCore

extension FunctionsFile {
    /// Whether any trigger watches accounts.
    public var watchesAccounts: Bool { triggers.contains { $0.on == .userCreated || $0.on == .userDeleted } }

    /// The events an account made or deleted causes, as Cloud Functions' `auth.user().onCreate`/`onDelete`:
    /// the body carries `"user"`, the account as the admin API shows it (never its password hash), as it was
    /// before its deletion for `user.deleted`. An account's events go to an endpoint in order.
    public func accountEvents(_ change: AccountChange, user: UserRecord, time: Timestamp,
                              makeID: () -> String) -> [FunctionEventRecord] {
        let kind: Event = change == .created ? .userCreated : .userDeleted
        var out: [FunctionEventRecord] = []
        for trigger in triggers where trigger.on == kind {
            let id = makeID()
            var w = JSONWriter()
            Self.writeHead(id: id, type: kind.rawValue, name: trigger.name, time: time, params: nil, to: &w)
            w.raw(",\"user\":")
            w.raw(user.adminJSON.serialized())
            w.raw("}")
            out.append(FunctionEventRecord(id: id, endpoint: trigger.endpoint, orderingKey: "\(trigger.endpoint)/user/\(user.uid)",
                                           body: w.bytes, createdAt: time))
        }
        return out
    }
}
