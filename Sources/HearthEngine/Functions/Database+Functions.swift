import HearthCore

/// The queue of function events: read and changed by the admin only (the admin endpoints, the delivery
/// service). Documents' events are queued by the commits that cause them (`Database.apply`).
extension Database {
    func performFunctions(_ operation: FunctionsOperation, as identity: Identity,
                          completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) throws {
        guard identity.isAdmin else {
            throw rules.dev ? HearthError.permissionDenied("Missing or insufficient permissions: function events take the admin key.")
                : HearthError.permissionDenied()
        }
        switch operation {
        case .events(let dead, let after, let limit):
            storage.read({ try $0.functionEvents(dead: dead, after: after, limit: limit) }) {
                completion($0.map(Outcome.functionEvents))
            }
        case .event(let id):
            storage.read({ try $0.functionEvent(id: id).map { [$0] } ?? [] }) { completion($0.map(Outcome.functionEvents)) }
        case .due(let skipping, let limit):
            let now = Timestamp.now()
            storage.read({ try $0.dueFunctionEvents(now: now, skipping: skipping, limit: limit) }) {
                completion($0.map(Outcome.functionEvents))
            }
        case .delivered(let id, let writes):
            storage.write({ [self] context -> Outcome in
                guard try context.removePendingFunctionEvent(id: id) else { return .done }
                guard !writes.isEmpty else { return .done }
                return .committed(try Self.apply(writes, commitTime: context.nextCommitTime(), in: context,
                                                 triggers: functions.file))
            }, completion: completion)
        case .failed(let id, let attempts, let next, let error, let dead):
            storage.write({ context -> Outcome in
                try context.recordFunctionEventAttempt(id: id, attempts: attempts, nextAttemptAt: next, lastError: error,
                                                       deadAt: dead ? Timestamp.now() : nil)
                return .done
            }, completion: completion)
        case .retry(let id):
            storage.write({ context -> Outcome in
                guard try context.requeueDeadFunctionEvent(id: id, now: Timestamp.now()) else {
                    throw HearthError.notFound("no dead function event has the id '\(id.prefix(100))'")
                }
                return .done
            }, completion: completion)
        case .fireTimers, .timers, .runSchedules:
            performFunctionClock(operation, completion: completion)
        }
    }
}
