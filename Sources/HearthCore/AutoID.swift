#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// How a server names the documents it creates without an id (`POST /v1/docs/{collection}`). Both give 20
/// characters of `[A-Za-z0-9]`, valid wherever a Firestore auto id is.
public enum AutoIDs: String, Sendable, CaseIterable {
    /// The default: 8 characters of the creation time in milliseconds, then 12 from the CSPRNG (71 bits, as
    /// many as a version 7 UUID holds). Ids sort in the order documents were created (within a millisecond, at
    /// random), so a new document's row, its path key and the index rows of fields that many documents share
    /// (a flag, an owner, a status) are added at the end of SQLite's B-trees instead of at random places: a
    /// burst of creates writes a few pages per commit instead of one or more per document (`bench/README.md`).
    /// The id tells anyone who sees it when the document was created, as its `createTime` tells its readers.
    case ordered
    /// All 20 characters from the CSPRNG, as Firestore's: ids reveal nothing, and a burst of creates writes
    /// each document's rows at random places.
    case random

    /// A new id.
    public func make() -> String {
        switch self {
        case .ordered: makeOrderedAutoID()
        case .random: makeAutoID()
        }
    }
}

/// 20 characters from `[A-Za-z0-9]`, all drawn from a CSPRNG: document ids as Firestore makes them
/// (`AutoIDs.random`), and the random names of transactions, keys and folders.
public func makeAutoID() -> String {
    String(unsafeUninitializedCapacity: 20) { out in
        fillRandomCharacters(UnsafeMutableBufferPointer(rebasing: out[0..<20]))
        return 20
    }
}

/// 20 characters from `[A-Za-z0-9]`: the milliseconds since 1970 in 8 base-62 digits whose byte order is their
/// numeric order (`0-9A-Za-z`; 8 digits last until the year 8888), then 12 characters from the CSPRNG
/// (`AutoIDs.ordered`). The time never goes back within a process: a clock set back repeats the last
/// millisecond until it passes it again.
public func makeOrderedAutoID() -> String {
    orderedAutoID(at: notBeforeLatest(currentMilliseconds()))
}

/// An ordered id for the time `milliseconds` since 1970 (`makeOrderedAutoID`).
public func orderedAutoID(at milliseconds: UInt64) -> String {
    let ordered: StaticString = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    var time = milliseconds
    return String(unsafeUninitializedCapacity: 20) { out in
        for i in stride(from: 7, through: 0, by: -1) {
            out[i] = ordered.utf8Start[Int(time % 62)]
            time /= 62
        }
        fillRandomCharacters(UnsafeMutableBufferPointer(rebasing: out[8..<20]))
        return 20
    }
}

/// The milliseconds since 1970 that an ordered id begins with (`makeOrderedAutoID`); nil when `id` is not 20
/// characters of `[A-Za-z0-9]` (a random id reads as some time too).
public func orderedAutoIDMilliseconds(_ id: String) -> UInt64? {
    let utf8 = Array(id.utf8)
    guard utf8.count == 20 else { return nil }
    var time: UInt64 = 0
    for c in utf8[0..<8] {
        let digit: UInt8
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = c - UInt8(ascii: "a") + 36
        default: return nil
        }
        time = time * 62 + UInt64(digit)
    }
    return time
}

/// The wall clock in milliseconds since 1970.
public func currentMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UInt64(max(0, now.tv_sec)) * 1000 + UInt64(now.tv_nsec / 1_000_000)
}

/// The latest millisecond an ordered id was made at in this process.
private let latestMilliseconds = Atomic<UInt64>(0)

/// `now`, or the latest millisecond an ordered id was made at if that is later; remembers the result.
private func notBeforeLatest(_ now: UInt64) -> UInt64 {
    var seen = latestMilliseconds.load(ordering: .relaxed)
    while now > seen {
        let (exchanged, original) = latestMilliseconds.compareExchange(expected: seen, desired: now, ordering: .relaxed)
        if exchanged { return now }
        seen = original
    }
    return seen
}

/// Fills `out` with characters from `[A-Za-z0-9]`, each equally likely, from the CSPRNG: 64 bytes in one call
/// of the C library's `arc4random_buf` (a ChaCha20 generator seeded from `getrandom`, which makes a system call
/// only now and then), else from `SystemRandomNumberGenerator` (a `getrandom` call per 8 bytes).
private func fillRandomCharacters(_ out: UnsafeMutableBufferPointer<UInt8>) {
    let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { random in
        var available = fillRandom(random)
        var used = 0
        var rng = SystemRandomNumberGenerator()
        var filled = 0
        while filled < out.count {
            if used == available {
                // Only if the one call fell short: 8 bytes at a time from the generator.
                var word = rng.next()
                for i in 0..<8 { random[i] = UInt8(truncatingIfNeeded: word); word >>= 8 }
                available = 8
                used = 0
            }
            // 62 * 4 = 248: bytes >= 248 are skipped so every character is equally likely.
            let byte = random[used]
            used += 1
            if byte < 248 {
                out[filled] = alphabet.utf8Start[Int(byte % 62)]
                filled += 1
            }
        }
    }
}

/// Fills `buffer` from the system CSPRNG in one call; returns how many bytes it filled (0 where there is no
/// such call).
private func fillRandom(_ buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
    #if canImport(Glibc)
    guard let base = buffer.baseAddress else { return 0 }
    arc4random_buf(base, buffer.count)
    return buffer.count
    #else
    return 0
    #endif
}
