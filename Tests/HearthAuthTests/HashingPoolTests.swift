import Foundation
import HearthCore
import Testing
@testable import HearthAuth

/// A gate pool jobs wait at until the test opens it.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = false
    private(set) var arrived = 0

    func wait() {
        condition.lock()
        arrived += 1
        condition.broadcast()
        while !open { condition.wait() }
        condition.unlock()
    }

    func waitForArrivals(_ n: Int) {
        condition.lock()
        while arrived < n { condition.wait() }
        condition.unlock()
    }

    func release() {
        condition.lock()
        open = true
        condition.broadcast()
        condition.unlock()
    }
}

@Suite struct HashingPoolTests {
    @Test func burstBeyondTheQueueIsRefusedAndConcurrencyIsBounded() async throws {
        let pool = HashingPool(configuration: .init(threads: 2, maxQueueLength: 3))
        defer { pool.shutdown() }
        let gate = Gate()
        // Fill both workers first so the admission count below is deterministic.
        async let first: Int = try pool.run { gate.wait(); return 1 }
        async let second: Int = try pool.run { gate.wait(); return 2 }
        await Task.detached { gate.waitForArrivals(2) }.value

        let outcomes = await withTaskGroup(of: Result<Int, HearthError>.self) { group in
            for i in 0..<8 {
                group.addTask {
                    do throws(HearthError) {
                        return .success(try await pool.run { gate.wait(); return i })
                    } catch {
                        return .failure(error)
                    }
                }
            }
            // Wait until the queue has taken what it can and the rest were refused.
            while pool.statistics.queued + pool.statistics.rejected < 8 { await Task.yield() }
            #expect(pool.statistics.running == 2)
            #expect(pool.statistics.queued == 3)
            gate.release()
            var all: [Result<Int, HearthError>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let refused = outcomes.compactMap { outcome -> HearthError? in
            if case .failure(let e) = outcome { return e } else { return nil }
        }
        #expect(refused.count == 5)
        #expect(refused.allSatisfy { $0.code == .resourceExhausted && $0.retryAfter != nil })
        #expect(outcomes.count - refused.count == 3)
        #expect(try await first + second == 3)
        let stats = pool.statistics
        #expect(stats.peakRunning == 2)
        #expect(stats.completed == 5)
        #expect(stats.rejected == 5)
    }

    @Test func neverRunsMoreThanItsThreads() async throws {
        let pool = HashingPool(configuration: .init(threads: 2, maxQueueLength: 100))
        defer { pool.shutdown() }
        let hasher = try PasswordHasher(configuration: .init(memoryKiB: 256, iterations: 1), pool: pool)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<24 {
                group.addTask {
                    let phc = try await hasher.hash("password \(i)")
                    return try await hasher.verify("password \(i)", against: phc)
                }
            }
            for try await ok in group { #expect(ok) }
        }
        #expect(pool.statistics.peakRunning <= 2)
        #expect(pool.statistics.completed == 48)
    }

    @Test func shutdownFailsWaitingJobs() async {
        let pool = HashingPool(configuration: .init(threads: 1, maxQueueLength: 4))
        let gate = Gate()
        async let running: Int? = try? pool.run { gate.wait(); return 1 }
        await Task.detached { gate.waitForArrivals(1) }.value
        async let waiting: HearthError? = caught { try await pool.run { 2 } }
        while pool.statistics.queued < 1 { await Task.yield() }
        pool.shutdown()
        #expect(await waiting?.code == .unavailable)
        gate.release()
        #expect(await running == 1)
        #expect(await caught { try await pool.run { 3 } }?.code == .unavailable)
    }
}

@Suite struct HashingPoolCancellationTests {
    @Test func cancellingAWaitingCallerDropsItsJob() async {
        let pool = HashingPool(configuration: .init(threads: 1, maxQueueLength: 4))
        defer { pool.shutdown() }
        let gate = Gate()
        async let running: Int? = try? pool.run { gate.wait(); return 1 }
        await Task.detached { gate.waitForArrivals(1) }.value
        let waiter = Task { await caught { try await pool.run { 2 } } }
        while pool.statistics.queued < 1 { await Task.yield() }
        waiter.cancel()
        #expect(await waiter.value?.code == .unavailable)
        #expect(pool.statistics.queued == 0)
        gate.release()
        #expect(await running == 1)
        #expect(pool.statistics.completed == 1)
    }
}
