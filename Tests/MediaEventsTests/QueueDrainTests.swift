import Dispatch
import Synchronization
@_spi(Benchmarks) @testable import MediaEvents
import XCTest

/// When an asynchronous delivery queue's drain lingers for more work: after a burst, so that
/// libvlc's thread adds to the running drain instead of waking the queue's thread per event;
/// never after a lone event, where lingering only burns the queue thread's CPU and makes its
/// next wake-up wait for the sending thread to block.
final class QueueDrainTests: XCTestCase {
    private final class Source: Sendable {}

    func testDrain_afterALoneDelivery_givesTheQueueBackWithoutLingering() {
        let queue = DispatchQueue(label: "drain-lone")
        let statistics = DrainStatistics.of(queue)
        let source = Source()
        let handler = EventsHandler(
            object: source, configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
        let rounds = 200
        runWithDeadline(30, "lone deliveries") {
            for round in 0..<rounds {
                handler.handleEvent { _ in }
                // The next event is sent only once this one's drain has given the queue back.
                guard waitUntil(10, poll: 0.000_2, { statistics.queueGivenBack.load(ordering: .relaxed) > round })
                else { return XCTFail("the drain of event \(round) did not give the queue back") }
            }
        }
        XCTAssertEqual(statistics.deliveries.load(ordering: .relaxed), rounds)
        XCTAssertEqual(statistics.drainsScheduled.load(ordering: .relaxed), rounds)
        XCTAssertEqual(statistics.lingers.load(ordering: .relaxed), 0, "a drain lingered after a lone delivery")
        withExtendedLifetime(source) {}
    }

    func testDrain_inABurst_lingersInsteadOfBeingScheduledPerEvent() {
        let queue = DispatchQueue(label: "drain-burst")
        let statistics = DrainStatistics.of(queue)
        let source = Source()
        let handler = EventsHandler(
            object: source, configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
        let events = 20_000
        let delivered = Atomic<Int>(0)
        runWithDeadline(30, "a burst") {
            for _ in 0..<events { handler.handleEvent { _ in delivered.add(1, ordering: .relaxed) } }
            XCTAssertTrue(waitUntil(20) { delivered.load(ordering: .relaxed) == events })
        }
        let drains = statistics.drainsScheduled.load(ordering: .relaxed)
        XCTAssertEqual(statistics.deliveries.load(ordering: .relaxed), events)
        XCTAssertGreaterThan(statistics.lingers.load(ordering: .relaxed), 0)
        // A drain per event would be one wake-up of the queue's thread per event.
        XCTAssertLessThan(drains, events / 10, "\(drains) drains scheduled for a burst of \(events) events")
        withExtendedLifetime(source) {}
    }
}
