import HearthCore
import Testing
@testable import HearthServer

/// The bookkeeping of function events between the read of the queue that hands them out and their committed
/// outcome: attempts bounded per endpoint, events read beyond them waiting for their endpoint, each endpoint
/// held to its share, all held to one bound, and a stop letting the waiting ones go.
@Suite struct DeliveryInFlightTests {
    static func event(_ sequence: Int64, _ endpoint: String = "a") -> FunctionEventRecord {
        var event = FunctionEventRecord(id: "evt_\(sequence)", endpoint: endpoint, orderingKey: "k\(sequence)", body: [],
                                        createdAt: Timestamp(microseconds: 0))
        event.sequence = sequence
        return event
    }

    /// What follows an answer, in short: "next 3", "read again" or "done".
    static func after(_ answer: InFlight.AfterAnswer) -> String {
        switch answer {
        case .next(let event): "next \(event.sequence)"
        case .readAgain: "read again"
        case .done: "done"
        }
    }

    @Test func eventsBeyondTheAttemptsWaitAndGoInReadOrderAsEarlierOnesAreAnswered() throws {
        let flights = InFlight(attempts: 2, held: 8)
        let room = try #require(flights.room(endpoints: 1))
        #expect(room.free == 8 && room.skipping.isEmpty && room.full.isEmpty)
        let admitted = (1...5).map { flights.admit(Self.event($0)) }
        #expect(admitted == [true, true, false, false, false], "two attempts at once; the rest wait")
        #expect(!flights.admit(Self.event(1)), "an event in flight is not taken twice")
        #expect(flights.count == 5)
        #expect(Self.after(flights.answered(Self.event(1))) == "next 3")
        #expect(Self.after(flights.answered(Self.event(2))) == "next 4")
        #expect(Self.after(flights.answered(Self.event(3))) == "next 5")
        #expect(Self.after(flights.answered(Self.event(4))) == "done", "the read left nothing of the endpoint's in the queue")
        #expect(Self.after(flights.answered(Self.event(5))) == "done")
        #expect(flights.count == 5, "answered, but in flight until the outcome is committed")
        for k: Int64 in 1...5 { _ = flights.end(Self.event(k), laterPending: false) }
        #expect(flights.count == 0)
    }

    /// While events wait and less than half the room is free, the queue is not read again; each read skips
    /// what is in flight.
    @Test func theQueueIsReadAgainOnceNothingWaitsOrHalfTheRoomIsFree() throws {
        let flights = InFlight(attempts: 1, held: 4)
        for k: Int64 in 1...4 { _ = flights.admit(Self.event(k)) }
        #expect(flights.room(endpoints: 1) == nil, "full")
        #expect(!flights.admit(Self.event(5)), "no more than held")
        _ = flights.answered(Self.event(1))
        #expect(flights.end(Self.event(1), laterPending: false) == false, "three waiting or attempting, one free: no read yet")
        #expect(flights.room(endpoints: 1) == nil)
        _ = flights.answered(Self.event(2))
        #expect(flights.end(Self.event(2), laterPending: false) == true, "half the room free")
        #expect(try #require(flights.room(endpoints: 1)).skipping == [3, 4])
    }

    /// With several endpoints, one holds no more than its share of the room, so the others' events are read.
    @Test func aSlowEndpointHoldsOnlyItsShare() throws {
        let flights = InFlight(attempts: 2, held: 12)
        _ = try #require(flights.room(endpoints: 3))
        for k: Int64 in 1...6 { _ = flights.admit(Self.event(k, "slow")) }
        #expect(flights.count == 4, "a share is 12 / 3 = 4: two attempting, two waiting, the rest left in the queue")
        #expect(try #require(flights.room(endpoints: 3)).full == ["slow"])
        for k: Int64 in 11...14 { _ = flights.admit(Self.event(k, "slower")) }
        // Two endpoints wait with their share each, and less than half the room is free: the third endpoint's
        // events are still read.
        #expect(flights.count == 8)
        #expect(try #require(flights.room(endpoints: 3)).full == ["slow", "slower"])
        #expect(flights.admit(Self.event(7, "fast")))
        // An endpoint whose events a read left in the queue has it read again once a slot frees; one whose
        // events were all taken does not.
        for k: Int64 in 1...2 { _ = flights.answered(Self.event(k, "slow")) }
        #expect(Self.after(flights.answered(Self.event(3, "slow"))) == "read again")
        #expect(Self.after(flights.answered(Self.event(7, "fast"))) == "done")
    }

    /// An ended event wakes a read of the queue only when the queue may hold events due that no read handed
    /// out: the last read filled its room (or failed), a wake-up found no room, or the event's ordering key has
    /// later events pending. Else the commits that queue new events wake the service themselves.
    @Test func anEndedEventWakesAReadOnlyWhenTheQueueMayHoldMore() throws {
        let flights = InFlight(attempts: 4, held: 8)
        enum Read { case one, filled, failed }
        let cases: [(read: Read, laterPending: Bool, wakes: Bool)] = [
            (.one, laterPending: false, wakes: false),
            (.one, laterPending: true, wakes: true),
            (.filled, laterPending: false, wakes: true),
            (.failed, laterPending: false, wakes: true),
        ]
        for (k, c) in cases.enumerated() {
            let sequence = Int64(k + 1)
            let room = try #require(flights.room(endpoints: 1))
            #expect(flights.admit(Self.event(sequence)))
            switch c.read {
            case .one: flights.read(1, of: room.free)
            case .filled: flights.read(room.free, of: room.free)
            case .failed: break
            }
            _ = flights.answered(Self.event(sequence))
            #expect(flights.end(Self.event(sequence), laterPending: c.laterPending) == c.wakes, "case \(k)")
        }
        // A wake-up that found no room leaves a later end to wake a read.
        for k: Int64 in 11...18 { _ = flights.admit(Self.event(k)) }
        #expect(flights.room(endpoints: 1) == nil, "full")
        _ = flights.answered(Self.event(11))
        #expect(flights.end(Self.event(11), laterPending: false) == false, "seven in flight, three waiting: no read yet")
        for k: Int64 in 12...13 {
            _ = flights.answered(Self.event(k))
            _ = flights.end(Self.event(k), laterPending: false)
        }
        _ = flights.answered(Self.event(14))
        #expect(flights.end(Self.event(14), laterPending: false), "nothing waits now, and a wake-up found no room before")
    }

    /// Stopping lets the waiting events go (pending in the queue, for the next start) and starts no more.
    @Test func aStopLetsTheWaitingEventsGo() async {
        let flights = InFlight(attempts: 1, held: 8)
        for k: Int64 in 1...3 { _ = flights.admit(Self.event(k)) }
        flights.stop()
        #expect(flights.stopped && flights.count == 1)
        #expect(Self.after(flights.answered(Self.event(1))) == "done")
        #expect(!flights.end(Self.event(1), laterPending: true), "no read once stopping")
        await flights.drained()
        #expect(flights.count == 0 && flights.room(endpoints: 1) == nil && !flights.admit(Self.event(4)))
    }
}
