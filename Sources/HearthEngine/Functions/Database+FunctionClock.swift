import HearthCore

/// What a run of timers or schedules did: how many events it queued, when the next is due (nil: none), and
/// (when asked) how many timers are pending.
public struct FunctionClockOutcome: Sendable, Equatable {
    public var fired: Int
    public var next: Timestamp?
    public var pending: Int?

    public init(fired: Int, next: Timestamp?, pending: Int? = nil) {
        self.fired = fired
        self.next = next
        self.pending = pending
    }
}

/// Timers and schedules turned into events: each run is one write job, so an event is queued in the
/// transaction that removes its timer or records its schedule's slot, and nothing fires twice.
extension Database {
    func performFunctionClock(_ operation: FunctionsOperation,
                              completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) {
        switch operation {
        case .timers(let count):
            storage.read({ reader -> Outcome in
                .functionClock(FunctionClockOutcome(fired: 0, next: try reader.nextFunctionTimer(),
                                                    pending: count ? try reader.functionTimerCount() : nil))
            }, completion: completion)
        case .fireTimers(let now, let limit):
            let file = functions.file
            storage.write({ context -> Outcome in
                let due = try context.reader.dueFunctionTimers(now: now, limit: limit)
                var events: [FunctionEventRecord] = []
                let queuedAt = Timestamp.now()
                for record in due {
                    try context.setFunctionTimer(name: record.name, path: record.path, due: nil)
                    guard let file, let path = try? DocumentPath(record.path),
                          let event = file.timerEvent(record, document: try context.ruleLookup(path), queuedAt: queuedAt,
                                                      makeID: FunctionsFile.makeEventID) else { continue }
                    events.append(event)
                }
                if !events.isEmpty { try context.addFunctionEvents(events) }
                return .functionClock(FunctionClockOutcome(fired: events.count, next: try context.reader.nextFunctionTimer(),
                                                           pending: nil))
            }, completion: completion)
        case .runSchedules(let now):
            let schedules = functions.file?.schedules ?? []
            storage.write({ context -> Outcome in
                var events: [FunctionEventRecord] = []
                var next: Timestamp?
                let queuedAt = Timestamp.now()
                for schedule in schedules {
                    var state = try context.reader.functionSchedule(name: schedule.name)
                    if state?.spec != schedule.spec {
                        // New, or its expression changed: it starts from now, with nothing missed.
                        state = FunctionScheduleState(spec: schedule.spec, lastSlot: now)
                        try context.setFunctionSchedule(name: schedule.name, state!)
                    } else if let last = state?.lastSlot, let slot = schedule.latestSlot(after: last, through: now) {
                        events.append(schedule.event(slot: slot, queuedAt: queuedAt, makeID: FunctionsFile.makeEventID))
                        state!.lastSlot = slot
                        try context.setFunctionSchedule(name: schedule.name, state!)
                    }
                    if let upcoming = schedule.next(after: state!.lastSlot), next.map({ upcoming < $0 }) ?? true {
                        next = upcoming
                    }
                }
                if !events.isEmpty { try context.addFunctionEvents(events) }
                return .functionClock(FunctionClockOutcome(fired: events.count, next: next))
            }, completion: completion)
        default:
            completion(.failure(HearthError.internal("not a timer or schedule operation")))
        }
    }
}
