import Foundation
import HearthCore

/// The queue of function events: read and changed by the admin only (the admin endpoints, the delivery
/// service). Documents' events are queued by the commits that cause them (`Database.apply`).
extension Database {
    func performFunctions(_ operation: FunctionsOperation, as identity: Identity, placement: Placement,
                          completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) throws {
        guard identity.isAdmin else {
            throw rules.dev ? HearthError.permissionDenied("Missing or insufficient permissions: function events take the admin key.")
                : HearthError.permissionDenied()
        }
        switch operation {
        case .events(let dead, let after, let limit):
            read(placement, { try $0.functionEvents(dead: dead, after: after, limit: limit) }) {
                completion($0.map(Outcome.functionEvents))
            }
        case .event(let id):
            read(placement, { try $0.functionEvent(id: id).map { [$0] } ?? [] }) { completion($0.map(Outcome.functionEvents)) }
        case .due(let skipping, let excluding, let limit):
            let now = Timestamp.now()
            read(placement, { try $0.dueFunctionEvents(now: now, skipping: skipping, excluding: excluding, limit: limit) }) {
                completion($0.map(Outcome.functionEvents))
            }
        case .delivered(let acknowledgements):
            acknowledge(acknowledgements, completion: completion)
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
            }, completion: { [functions] result in
                // Due now: the delivery looks at once, not at its next poll.
                if case .success = result { functions.committedEvents() }
                completion(result)
            })
        case .fireTimers, .timers, .runSchedules:
            performFunctionClock(operation, completion: completion)
        }
    }

    /// The acknowledgements without writes are removed in one job; each with writes is a job of its own, so
    /// writes that cannot be committed fail alone and leave their event pending. All are submitted at once,
    /// so the writer commits them together (one commit per round, not one per event).
    private func acknowledge(_ acknowledgements: [FunctionAcknowledgement],
                             completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) {
        if acknowledgements.isEmpty { return completion(.success(.acknowledged([]))) }
        let plain = acknowledgements.indices.filter { acknowledgements[$0].writes.isEmpty }
        let withWrites = acknowledgements.indices.filter { !acknowledgements[$0].writes.isEmpty }
        let outcomes = AcknowledgementJobs(count: acknowledgements.count, jobs: (plain.isEmpty ? 0 : 1) + withWrites.count) {
            completion(.success(.acknowledged($0)))
        }
        if !plain.isEmpty {
            let ids = plain.map { acknowledgements[$0].id }
            storage.write({ context in
                try ids.map { try context.removePendingFunctionEvent(id: $0).laterPending }
            }, completion: { result in outcomes.finish(plain, result) })
        }
        for k in withWrites {
            let acknowledgement = acknowledgements[k]
            storage.write({ [self] context -> [Bool] in
                let removal = try context.removePendingFunctionEvent(id: acknowledgement.id)
                guard removal.removed else { return [false] }
                _ = try Self.apply(acknowledgement.writes, commitTime: context.nextCommitTime(), in: context,
                                   triggers: functions.file)
                return [removal.laterPending]
            }, completion: { result in outcomes.finish([k], result) })
        }
    }
}

/// Gathers the outcomes of an acknowledgement's jobs and reports them once every job has finished.
private final class AcknowledgementJobs: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [AcknowledgementOutcome]
    private var jobsLeft: Int
    private let done: @Sendable ([AcknowledgementOutcome]) -> Void

    init(count: Int, jobs: Int, done: @escaping @Sendable ([AcknowledgementOutcome]) -> Void) {
        outcomes = Array(repeating: AcknowledgementOutcome(), count: count)
        jobsLeft = jobs
        self.done = done
    }

    /// A job's result for the acknowledgements at `indices`: for each, whether later events of its key are pending.
    func finish(_ indices: [Int], _ result: Result<[Bool], any Error>) {
        lock.lock()
        switch result {
        case .success(let later): for (i, laterPending) in zip(indices, later) { outcomes[i].laterPending = laterPending }
        case .failure(let error): for i in indices { outcomes[i].error = error }
        }
        jobsLeft -= 1
        let finished = jobsLeft == 0 ? outcomes : nil
        lock.unlock()
        if let finished { done(finished) }
    }
}
