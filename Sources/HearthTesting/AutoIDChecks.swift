import HearthCore

/// Whether `id` does not begin with a time within a day of now, as an ordered auto id made now would: for a
/// random id, true but about once in a million draws.
public func carriesNoRecentTime(_ id: String) -> Bool {
    let now = currentMilliseconds(), day: UInt64 = 86_400_000
    return orderedAutoIDMilliseconds(id).map { $0 + day < now || $0 > now + day } ?? true
}
