/// A pending function timer as the storage keeps it: the timer's name, the document that armed it, and when
/// it is due. One per timer and document.
public struct FunctionTimerRecord: Sendable, Equatable {
    /// The timer's name in the functions file.
    public var name: String
    /// The document's path, as text.
    public var path: String
    /// When it fires.
    public var dueAt: Timestamp

    /// Makes a record.
    public init(name: String, path: String, dueAt: Timestamp) {
        self.name = name
        self.path = path
        self.dueAt = dueAt
    }
}

/// What the storage keeps of a schedule: the expression and time zone it last ran with (`spec`) and the last
/// slot it fired (or when it was first seen), so that a restart neither fires a slot twice nor misses one.
public struct FunctionScheduleState: Sendable, Equatable {
    /// The cron expression and time zone, as one text.
    public var spec: String
    /// The last slot fired.
    public var lastSlot: Timestamp

    /// Makes a state.
    public init(spec: String, lastSlot: Timestamp) {
        self.spec = spec
        self.lastSlot = lastSlot
    }
}
