import HearthCore
import Testing
@testable import HearthAuth

@Suite struct LoginThrottleTests {
    @Test func backsOffExponentiallyPerAccountWithACap() {
        let clock = TestClock()
        var throttle = LoginThrottle(configuration: .init(freeAccountFailures: 3, freeAddressFailures: 100,
                                                          baseDelay: .seconds(2), maxDelay: .seconds(10)),
                                     now: clock.function)
        for _ in 0..<3 {
            #expect(throttle.retryAfter(account: "a", address: "ip") == nil)
            throttle.recordFailure(account: "a", address: "ip")
        }
        #expect(throttle.retryAfter(account: "a", address: "ip") == nil)
        throttle.recordFailure(account: "a", address: "ip")          // 4th: 2 s
        #expect(throttle.retryAfter(account: "a", address: "ip") == 2)
        #expect(throttle.retryAfter(account: "b", address: "other") == nil)
        clock.advance(seconds: 2)
        #expect(throttle.retryAfter(account: "a", address: nil) == nil)
        throttle.recordFailure(account: "a", address: nil)           // 5th: 4 s
        #expect(throttle.retryAfter(account: "a", address: nil) == 4)
        clock.advance(seconds: 4)
        throttle.recordFailure(account: "a", address: nil)           // 6th: 8 s
        #expect(throttle.retryAfter(account: "a", address: nil) == 8)
        clock.advance(seconds: 8)
        throttle.recordFailure(account: "a", address: nil)           // 7th: capped at 10 s
        #expect(throttle.retryAfter(account: "a", address: nil) == 10)
        clock.advance(seconds: 3)
        #expect(throttle.retryAfter(account: "a", address: nil) == 7)
    }

    @Test func successClearsTheAccountButNotTheAddress() {
        let clock = TestClock()
        var throttle = LoginThrottle(configuration: .init(freeAccountFailures: 1, freeAddressFailures: 1),
                                     now: clock.function)
        throttle.recordFailure(account: "a", address: "ip")
        throttle.recordFailure(account: "a", address: "ip")
        #expect(throttle.retryAfter(account: "a", address: nil) == 1)
        throttle.recordSuccess(account: "a")
        #expect(throttle.retryAfter(account: "a", address: nil) == nil)
        #expect(throttle.retryAfter(account: nil, address: "ip") == 1)
    }

    @Test func perAddressLimitCoversManyAccounts() {
        let clock = TestClock()
        var throttle = LoginThrottle(configuration: .init(freeAccountFailures: 5, freeAddressFailures: 4),
                                     now: clock.function)
        for i in 0..<5 { throttle.recordFailure(account: "user\(i)", address: "10.0.0.1") }
        #expect(throttle.retryAfter(account: "fresh", address: "10.0.0.1") == 1)
        #expect(throttle.retryAfter(account: "fresh", address: "10.0.0.2") == nil)
    }

    @Test func countsAreForgottenAfterAQuietPeriod() {
        let clock = TestClock()
        var throttle = LoginThrottle(configuration: .init(freeAccountFailures: 1, forgetAfter: .seconds(60)),
                                     now: clock.function)
        throttle.recordFailure(account: "a", address: nil)
        throttle.recordFailure(account: "a", address: nil)
        throttle.recordFailure(account: "a", address: nil)
        #expect(throttle.retryAfter(account: "a", address: nil) == 2)
        clock.advance(seconds: 61)
        #expect(throttle.retryAfter(account: "a", address: nil) == nil)
        throttle.recordFailure(account: "a", address: nil)  // starts over: the first failure is free
        #expect(throttle.retryAfter(account: "a", address: nil) == nil)
        clock.advance(seconds: 61)
        throttle.sweep()
        #expect(throttle.entryCount == 0)
    }

    @Test func memoryIsBounded() {
        let clock = TestClock()
        var throttle = LoginThrottle(configuration: .init(maxEntries: 100), now: clock.function)
        for i in 0..<1_000 { throttle.recordFailure(account: "u\(i)@x.com", address: nil) }
        #expect(throttle.entryCount <= 100)
    }
}
