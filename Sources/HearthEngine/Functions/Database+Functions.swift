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
            }, completion: completion)
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
        let outcomes = AcknowledgementOutcomes(count: acknowledgements.count, jobs: (plain.isEmpty ? 0 : 1) + withWrites.count) {
            completion(.success(.acknowledged($0)))
        }
        if !plain.isEmpty {
            let ids = plain.map { acknowledgements[$0].id }
            storage.write({ context in
                for id in ids { _ = try context.removePendingFunctionEvent(id: id) }
            }, completion: { result in outcomes.finish(plain, result) })
        }
        for k in withWrites {
            let acknowledgement = acknowledgements[k]
            storage.write({ [self] context in
                guard try context.removePendingFunctionEvent(id: acknowledgement.id) else { return }
                _ = try Self.apply(acknowledgement.writes, commitTime: context.nextCommitTime(), in: context,
                                   triggers: functions.file)
            }, completion: { result in outcomes.finish([k], result) })
        }
    }
}

/// Gathers the outcomes of an acknowledgement's jobs and reports them once every job has finished.
private final class AcknowledgementOutcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [(any Error)?]
    private var jobsLeft: Int
    private let done: @Sendable ([(any Error)?]) -> Void

    init(count: Int, jobs: Int, done: @escaping @Sendable ([(any Error)?]) -> Void) {
        errors = Array(repeating: nil, count: count)
        jobsLeft = jobs
        self.done = done
    }

    func finish(_ indices: [Int], _ result: Result<Void, any Error>) {
        lock.lock()
        if case .failure(let error) = result { for i in indices { errors[i] = error } }
        jobsLeft -= 1
        let finished = jobsLeft == 0 ? errors : nil
        lock.unlock()
        if let finished { done(finished) }
    }
}
