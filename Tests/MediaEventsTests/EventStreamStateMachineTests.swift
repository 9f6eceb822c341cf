// Pure logic of the stream buffer, driven with a fake source's events and plain waiters.
// The real-libvlc behaviour of streams is in EventStreamTests.

@testable import MediaEvents
import XCTest

/// A source with one state kind and two progress kinds; the payload is the arrival number.
enum FakeEvent: VLCEvent, Equatable {
    case state(Int)
    case time(Int)
    case volume(Int)

    enum Kind: Int, VLCEventKind {
        case state, time, volume
        var nativeType: Int32 { 0x700 + Int32(rawValue) }
        var index: Int { rawValue }
        var isProgress: Bool { self != .state }
    }

    var kind: Kind {
        switch self {
        case .state: .state
        case .time: .time
        case .volume: .volume
        }
    }

    var value: Int {
        switch self {
        case .state(let n), .time(let n), .volume(let n): n
        }
    }

    var description: String { "\(kind.rawValue):\(value)" }

    /// An event of a random kind with arrival number `n`.
    static func random(_ n: Int, _ generator: inout SplitMix64) -> FakeEvent {
        switch generator.next() % 3 {
        case 0: .state(n)
        case 1: .time(n)
        default: .volume(n)
        }
    }
}

final class EventStreamStateMachineTests: XCTestCase {
    typealias Machine = EventStreamStateMachine<FakeEvent, Int>

    /// Takes everything pending without suspending.
    private func drain(_ machine: inout Machine) -> [FakeEvent] {
        var out: [FakeEvent] = []
        while case .deliver(let event) = machine.next() { out.append(event) }
        return out
    }

    func testReceive_whenConsumerIsSlow_keepsStateEventsAndOnlyTheLatestProgressInLibvlcOrder() {
        var machine = Machine(policy: .default)
        let input: [FakeEvent] = [.state(0), .time(1), .state(2), .time(3), .volume(4), .state(5), .time(6)]
        var discarded: [FakeEvent] = []
        for event in input {
            if case .discard(let old) = machine.receive(event) { discarded.append(old) }
        }
        // time(3) took the place of time(1) and time(6) of time(3): each new value goes behind
        // everything that arrived before it, so the output is a subsequence of the input.
        XCTAssertEqual(drain(&machine), [.state(0), .state(2), .volume(4), .state(5), .time(6)])
        XCTAssertEqual(discarded, [.time(1), .time(3)], "replaced values are handed out to be released after unlock")
        XCTAssertEqual(machine.statistics.coalesced, 2)
        XCTAssertEqual(machine.statistics.delivered, 5)
        XCTAssertEqual(machine.statistics.dropped, 0)
    }

    func testReceive_whenProgressWasAlreadyTaken_doesNotCoalesceWithIt() {
        var machine = Machine(policy: .default)
        _ = machine.receive(.time(1))
        XCTAssertEqual(drain(&machine), [.time(1)])
        _ = machine.receive(.state(2))
        _ = machine.receive(.time(3))
        XCTAssertEqual(drain(&machine), [.state(2), .time(3)])
        XCTAssertEqual(machine.statistics.coalesced, 0)
    }

    func testReceive_whenUnbounded_keepsEveryEvent() {
        var machine = Machine(policy: .unbounded)
        let input: [FakeEvent] = (0..<100).map { $0 % 3 == 0 ? .state($0) : .time($0) }
        for event in input { _ = machine.receive(event) }
        XCTAssertEqual(drain(&machine), input)
        XCTAssertEqual(machine.statistics.coalesced, 0)
    }

    func testReceive_whenKeepNewestIsFull_dropsTheOldestPending() {
        var machine = Machine(policy: .keepNewest(2))
        var discarded: [FakeEvent] = []
        for n in 0..<5 {
            if case .discard(let old) = machine.receive(.state(n)) { discarded.append(old) }
        }
        XCTAssertEqual(drain(&machine), [.state(3), .state(4)])
        XCTAssertEqual(discarded, [.state(0), .state(1), .state(2)])
        XCTAssertEqual(machine.statistics.dropped, 3)
    }

    func testReceive_whenKeepOldestIsFull_dropsTheNewEvent() {
        var machine = Machine(policy: .keepOldest(2))
        for n in 0..<5 { _ = machine.receive(.state(n)) }
        XCTAssertEqual(drain(&machine), [.state(0), .state(1)])
        XCTAssertEqual(machine.statistics.dropped, 3)
        XCTAssertEqual(machine.statistics.delivered, 2)
    }

    func testReceive_whenConsumerIsWaiting_handsTheEventOverWithoutBuffering() {
        var machine = Machine(policy: .keepOldest(0))
        guard case .suspend = machine.next() else { return XCTFail("nothing pending: next must suspend") }
        XCTAssertTrue(isNone(machine.suspend(7)))
        guard case .resume(let waiter, let event, _) = machine.receive(.state(1)) else {
            return XCTFail("a waiting consumer gets the event")
        }
        XCTAssertEqual(waiter, 7)
        XCTAssertEqual(event, .state(1))
        guard case .discard = machine.receive(.state(2)) else {
            return XCTFail("keepOldest(0) keeps nothing while no one waits")
        }
        XCTAssertEqual(machine.statistics, stats(delivered: 1, dropped: 1))
    }

    /// Whether the waiter is resumed directly (`direct`): only while the consumer's last
    /// wake-up found nothing but its own event; a wake-up that found more (a burst) sends the
    /// next resumption through the queue, until a wake-up finds nothing again.
    func testReceive_resumesDirectlyOnlyWhileTheConsumerKeepsUp() {
        var machine = Machine(policy: .default)
        func resumption(_ n: Int, line: UInt = #line) -> Bool? {
            guard case .resume(_, .state(n), let direct) = machine.receive(.state(n)) else {
                XCTFail("the waiting consumer gets event \(n)", line: line)
                return nil
            }
            return direct
        }
        func waits(_ waiter: Int, line: UInt = #line) {
            guard case .suspend = machine.next() else { return XCTFail("nothing pending", line: line) }
            XCTAssertTrue(isNone(machine.suspend(waiter)), line: line)
        }
        waits(1)
        XCTAssertEqual(resumption(1), true, "a consumer that found nothing pending keeps up")
        // A burst: two events arrive before the resumed consumer asks again.
        for n in 2...3 { XCTAssertTrue(isNone(machine.receive(.state(n)))) }
        XCTAssertEqual(drain(&machine), [.state(2), .state(3)])
        waits(2)
        XCTAssertEqual(resumption(4), false, "its wake-up found more: through the queue")
        waits(3)
        XCTAssertEqual(resumption(5), true, "that wake-up found nothing more: directly again")
        // An event that arrives between `next()` and `suspend` resumes the waiter at once,
        // and counts as found pending.
        guard case .suspend = machine.next() else { return XCTFail("nothing pending") }
        XCTAssertTrue(isNone(machine.receive(.state(6))))
        guard case .resume(4, .state(6)) = machine.suspend(4) else { return XCTFail("the late event at once") }
        waits(5)
        XCTAssertEqual(resumption(7), false)
        XCTAssertEqual(machine.statistics.delivered, 7)
    }

    func testCancel_whenWaiting_endsOnceResumingTheWaiterAndLeavingTheHub() {
        var machine = Machine(policy: .default)
        _ = machine.next()
        _ = machine.suspend(3)
        guard case .end(let waiter, let removeFromHub, let discarded) = machine.cancel() else {
            return XCTFail("the first cancel ends the stream")
        }
        XCTAssertEqual(waiter, 3)
        XCTAssertTrue(removeFromHub)
        XCTAssertTrue(discarded.isEmpty)
        // Every later way to end is a no-op: the end happened exactly once.
        guard case .none = machine.cancel() else { return XCTFail("second cancel must do nothing") }
        guard case .none = machine.sourceFinished() else { return XCTFail("finish after cancel must do nothing") }
        guard case .end = machine.next() else { return XCTFail("next after the end returns nil") }
        guard case .resume(9, nil) = machine.suspend(9) else { return XCTFail("a late waiter is resumed with nil") }
        guard case .discard(.state(1)) = machine.receive(.state(1)) else {
            return XCTFail("events after the end are released, not kept")
        }
        XCTAssertTrue(machine.isFinished)
    }

    func testCancel_whenEventsArePending_discardsThemAndCountsThem() {
        var machine = Machine(policy: .default)
        _ = machine.receive(.state(1))
        _ = machine.receive(.time(2))
        guard case .end(nil, true, let discarded) = machine.cancel() else { return XCTFail("cancel ends") }
        XCTAssertEqual(discarded, [.state(1), .time(2)])
        XCTAssertEqual(machine.statistics.discarded, 2)
        XCTAssertEqual(machine.statistics.pending, 0)
    }

    func testSourceFinished_whenEventsArePending_deliversThemThenEndsOnce() {
        var machine = Machine(policy: .default)
        _ = machine.receive(.state(1))
        _ = machine.receive(.state(2))
        guard case .none = machine.sourceFinished() else { return XCTFail("no waiter while events are pending") }
        XCTAssertFalse(machine.isFinished, "pending events are still delivered after teardown")
        guard case .discard = machine.receive(.state(3)) else { return XCTFail("nothing is kept after teardown") }
        XCTAssertEqual(drain(&machine), [.state(1), .state(2)])
        XCTAssertTrue(machine.isFinished)
        // The hub already let go of the sink: cancelling now must not try to remove it again.
        guard case .none = machine.cancel() else { return XCTFail("cancel after the end does nothing") }
    }

    func testCancel_whenDraining_endsWithoutLeavingTheHubAgain() {
        var machine = Machine(policy: .default)
        _ = machine.receive(.state(1))
        _ = machine.sourceFinished()
        guard case .end(nil, false, let discarded) = machine.cancel() else {
            return XCTFail("cancel ends a draining stream")
        }
        XCTAssertEqual(discarded, [.state(1)])
    }

    func testSourceFinished_whenWaiting_resumesTheWaiterWithEnd() {
        var machine = Machine(policy: .default)
        _ = machine.next()
        _ = machine.suspend(5)
        guard case .resumeWithEnd(5) = machine.sourceFinished() else { return XCTFail("the waiter learns the end") }
        guard case .none = machine.sourceFinished() else { return XCTFail("only once") }
        guard case .none = machine.cancel() else { return XCTFail("only once") }
    }

    func testReceive_whenConsumerStallsDuringEndlessProgress_keepsMemoryBounded() {
        var machine = Machine(policy: .default)
        _ = machine.receive(.state(-1))
        for n in 0..<10_000 {
            _ = machine.receive(n.isMultiple(of: 2) ? .time(n) : .volume(n))
            XCTAssertLessThanOrEqual(machine.storageCount, 3 + 2 * 3 + 33, "empty slots must be squeezed out")
        }
        XCTAssertEqual(machine.statistics.pending, 3)
        XCTAssertEqual(machine.statistics.coalesced, 9_998)
        XCTAssertEqual(drain(&machine), [.state(-1), .time(9_998), .volume(9_999)])
    }

    /// Random interleavings of arrivals and takes, checked against an obviously correct model
    /// of the default policy (remove the pending value of the same progress kind, append).
    func testReceive_whenRandomInterleaving_matchesTheReferenceModel() {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<200 {
            var machine = Machine(policy: .default)
            var model: [FakeEvent] = []
            var taken: [FakeEvent] = []
            var expected: [FakeEvent] = []
            for n in 0..<Int(generator.next() % 400) {
                switch generator.next() % 10 {
                case 0..<3:
                    if case .deliver(let event) = machine.next() { taken.append(event) }
                    if !model.isEmpty { expected.append(model.removeFirst()) }
                default:
                    let event = FakeEvent.random(n, &generator)
                    _ = machine.receive(event)
                    if event.kind.isProgress { model.removeAll { $0.kind == event.kind } }
                    model.append(event)
                }
                XCTAssertEqual(machine.statistics.pending, model.count)
            }
            taken += drain(&machine)
            expected += model
            XCTAssertEqual(taken, expected)
            XCTAssertEqual(taken.map(\.value), taken.map(\.value).sorted(), "libvlc order is kept")
        }
    }

    func testTakeRun_whenDefaultPolicy_movesOnlyTheStateEventsBeforeTheFirstProgressValue() {
        var machine = Machine(policy: .default)
        for event: FakeEvent in [.state(0), .state(1), .state(2), .time(3), .state(4)] { _ = machine.receive(event) }
        guard case .deliver(.state(0)) = machine.next() else { return XCTFail("the oldest event first") }
        var batch = ContiguousArray<FakeEvent>()
        XCTAssertEqual(machine.takeRun(into: &batch), 2)
        XCTAssertEqual(Array(batch), [.state(1), .state(2)])
        // time(3) stayed pending, so a newer value still replaces it.
        guard case .discard(.time(3)) = machine.receive(.time(5)) else {
            return XCTFail("a progress value left pending must stay replaceable")
        }
        XCTAssertEqual(drain(&machine), [.state(4), .time(5)])
        XCTAssertEqual(machine.statistics.delivered, 5, "the moved events count as delivered")
    }

    func testTakeRun_whenUnboundedPolicy_movesEverythingPending() {
        var machine = Machine(policy: .unbounded)
        for event: FakeEvent in [.state(0), .time(1), .volume(2), .state(3)] { _ = machine.receive(event) }
        _ = machine.next()
        var batch = ContiguousArray<FakeEvent>()
        XCTAssertEqual(machine.takeRun(into: &batch), 3)
        XCTAssertEqual(Array(batch), [.time(1), .volume(2), .state(3)])
        XCTAssertEqual(machine.statistics.pending, 0)
    }

    func testTakeRun_whenPolicyHasALimit_movesNothing() {
        for policy: EventBufferingPolicy in [.keepNewest(3), .keepOldest(3)] {
            var machine = Machine(policy: policy)
            for n in 0..<3 { _ = machine.receive(.state(n)) }
            _ = machine.next()
            var batch = ContiguousArray<FakeEvent>()
            XCTAssertEqual(machine.takeRun(into: &batch), 0, "\(policy): taking early would make room")
            XCTAssertEqual(machine.statistics.pending, 2)
        }
    }

    /// A consumer that takes batches sees exactly what a consumer that takes one event at a
    /// time sees, for every policy, under random interleavings of arrivals and takes.
    func testTakeRun_whenRandomInterleaving_deliversWhatSingleTakesDeliver() {
        var generator = SplitMix64(seed: 7)
        let policies: [EventBufferingPolicy] = [.default, .unbounded, .keepNewest(4), .keepOldest(4)]
        for round in 0..<400 {
            let policy = policies[round % policies.count]
            var single = Machine(policy: policy)
            var batched = Machine(policy: policy)
            var batch = ContiguousArray<FakeEvent>()
            var fromSingle: [FakeEvent] = []
            var fromBatched: [FakeEvent] = []
            for n in 0..<Int(generator.next() % 400) {
                switch generator.next() % 10 {
                case 0..<3:
                    if case .deliver(let event) = single.next() { fromSingle.append(event) }
                    if !batch.isEmpty {
                        fromBatched.append(batch.removeFirst())
                    } else if case .deliver(let event) = batched.next() {
                        fromBatched.append(event)
                        _ = batched.takeRun(into: &batch)
                    }
                default:
                    let event = FakeEvent.random(n, &generator)
                    _ = single.receive(event)
                    _ = batched.receive(event)
                }
                XCTAssertEqual(fromBatched, fromSingle, "\(policy)")
            }
            fromSingle += drain(&single)
            fromBatched += Array(batch) + drain(&batched)
            XCTAssertEqual(fromBatched, fromSingle, "\(policy)")
            XCTAssertEqual(batched.statistics.delivered, single.statistics.delivered)
            XCTAssertEqual(batched.statistics.coalesced, single.statistics.coalesced)
            XCTAssertEqual(batched.statistics.dropped, single.statistics.dropped)
        }
    }

    private func isNone(_ action: Machine.SuspendAction) -> Bool {
        if case .none = action { return true }
        return false
    }

    private func isNone(_ action: Machine.ReceiveAction) -> Bool {
        if case .none = action { return true }
        return false
    }

    private func stats(delivered: Int = 0, coalesced: Int = 0, dropped: Int = 0) -> EventStreamStatistics {
        var statistics = EventStreamStatistics()
        statistics.delivered = delivered
        statistics.coalesced = coalesced
        statistics.dropped = dropped
        return statistics
    }
}

/// A small deterministic generator, so a failing interleaving can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
