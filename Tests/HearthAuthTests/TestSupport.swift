import Foundation
import HearthCore
@testable import HearthAuth
import HearthTesting

/// A clock tests move by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Timestamp

    init(_ start: Timestamp = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!) { current = start }

    var now: Timestamp {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(seconds: Int64) {
        lock.lock()
        current = Timestamp(microseconds: current.microseconds + seconds * 1_000_000)
        lock.unlock()
    }

    var function: @Sendable () -> Timestamp { { [self] in self.now } }
}

enum Fixture {
    /// Cheap Argon2 parameters so flow tests stay fast; one test runs the defaults.
    static let fastParameters = PasswordHasher.Configuration(memoryKiB: 64, iterations: 1, parallelism: 1)
    static let pool = HashingPool(configuration: .init(threads: 2, maxQueueLength: 256))

    static func hasher(_ parameters: PasswordHasher.Configuration = fastParameters) -> PasswordHasher {
        try! PasswordHasher(configuration: parameters, pool: pool)
    }

    struct Setup {
        let service: AuthService
        let storage: MemoryAuthStorage
        let clock: TestClock
    }

    static func service(_ configuration: AuthService.Configuration = AuthService.Configuration(),
                        parameters: PasswordHasher.Configuration = fastParameters) -> Setup {
        let clock = TestClock()
        let storage = MemoryAuthStorage()
        let service = AuthService(storage: storage, hasher: hasher(parameters), configuration: configuration,
                                  now: clock.function)
        return Setup(service: service, storage: storage, clock: clock)
    }
}

/// The error a throwing call raised, or nil if it succeeded.
/// (Untyped so closures inside `#expect` infer; every error here is a `HearthError`, anything else is
/// reported as an internal one.)
func caught<T>(_ body: () async throws -> T) async -> HearthError? {
    do {
        _ = try await body()
        return nil
    } catch let error as HearthError {
        return error
    } catch {
        return .internal("unexpected error type: \(error)")
    }
}
