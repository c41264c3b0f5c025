import HearthCore
import HearthStore

extension SQLiteDocumentReader {
    func dueFunctionTimers(now: Timestamp, limit: Int) throws -> [FunctionTimerRecord] {
        try context.dueFunctionTimers(now: now, limit: limit)
    }

    func nextFunctionTimer() throws -> Timestamp? { try context.nextFunctionTimer() }

    func functionTimerCount() throws -> Int { try context.functionTimerCount() }

    func functionTimer(name: String, path: String) throws -> Timestamp? { try context.functionTimer(name: name, path: path) }

    func functionSchedule(name: String) throws -> FunctionScheduleState? { try context.functionSchedule(name: name) }
}

extension SQLiteDocumentWriter {
    func setFunctionTimer(name: String, path: String, due: Timestamp?) throws {
        try context.setFunctionTimer(name: name, path: path, due: due)
    }

    func setFunctionSchedule(name: String, _ state: FunctionScheduleState) throws {
        try context.setFunctionSchedule(name: name, state)
    }
}
