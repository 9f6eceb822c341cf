import Dispatch
@_spi(Benchmarks) @testable import MediaEvents
import XCTest

/// When an asynchronous delivery queue's drain lingers for more work: in a burst, so that
/// libvlc's thread adds to the running drain instead of waking the queue's thread per event;
/// never after a lone event, where lingering only burns the queue thread's CPU and makes its
/// next wake-up wait for the sending thread to block. And when the thread that woke the
/// queue's thread yields to it.
final class QueueDrainTests: XCTestCase {
    private final class Source: Sendable {}

    /// A handler delivering asynchronously on a new queue, and that queue's mark.
    private func asyncHandler(_ label: String) -> (EventsHandler<Source>, QueueIdentity.Mark, Source) {
        let queue = DispatchQueue(label: label)
        let source = Source()
        let handler = EventsHandler(
            object: source, configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
        return (handler, QueueIdentity.mark(queue), source)
    }

    func testLingerRule_lingersForABurstOnly() {
        typealias Mark = QueueIdentity.Mark
        let linger = Mark.lingerNanoseconds
        XCTAssertFalse(Mark.lingers(delivered: 1, sinceGivenBack: 100 * linger), "a lone, paced event")
        XCTAssertFalse(Mark.lingers(delivered: 1, sinceGivenBack: linger), "a lone event a linger's span later")
        XCTAssertTrue(Mark.lingers(delivered: 2, sinceGivenBack: 100 * linger), "a batch of two")
        XCTAssertTrue(Mark.lingers(delivered: 1, sinceGivenBack: linger / 4), "right after the last give-back")
    }

    func testDrain_afterALoneDelivery_givesTheQueueBackWithoutLingering() {
        let (handler, mark, source) = asyncHandler("drain-lone")
        let statistics = mark.statistics
        let rounds = 200
        runWithDeadline(30, "lone deliveries") {
            for round in 0..<rounds {
                handler.handleEvent { _ in }
                // The next event is sent only once this one's drain has given the queue back,
                // more than a linger's span ago: a lone event.
                let paced = waitUntil(10, poll: 0.000_2) {
                    statistics.queueGivenBack.load(ordering: .relaxed) > round
                        && QueueIdentity.Mark.monotonicNanoseconds() - mark.lastGivenBack.load(ordering: .relaxed)
                            > 2 * QueueIdentity.Mark.lingerNanoseconds
                }
                guard paced else { return XCTFail("the drain of event \(round) did not give the queue back") }
            }
        }
        XCTAssertEqual(statistics.deliveries.load(ordering: .relaxed), rounds)
        XCTAssertEqual(statistics.drainsScheduled.load(ordering: .relaxed), rounds)
        XCTAssertEqual(statistics.lingers.load(ordering: .relaxed), 0, "a drain lingered after a lone delivery")
        withExtendedLifetime(source) {}
    }

    func testHandOff_yieldsOncePerWakeUpThatHasNotRun_neverPerQueuedEvent() {
        let (handler, mark, source) = asyncHandler("drain-hand-off")
        let statistics = mark.statistics
        let queue = handler.configuration.dispatchQueue!
        let events = 50
        // Suspended, the queue cannot start the drain its first push schedules: that push
        // finds its delivery still queued and yields; the rest join the scheduled drain.
        queue.suspend()
        for _ in 0..<events { handler.handleEvent { _ in } }
        XCTAssertEqual(statistics.drainsScheduled.load(ordering: .relaxed), 1)
        XCTAssertEqual(statistics.handOffYields.load(ordering: .relaxed), 1)
        queue.resume()
        runWithDeadline(30, "the queued deliveries") {
            XCTAssertTrue(waitUntil(20) { statistics.deliveries.load(ordering: .relaxed) == events })
        }
        XCTAssertEqual(statistics.handOffYields.load(ordering: .relaxed), 1)
        withExtendedLifetime(source) {}
    }

    func testDrain_inABurst_lingersInsteadOfBeingScheduledPerEvent() {
        let (handler, mark, source) = asyncHandler("drain-burst")
        let statistics = mark.statistics
        let events = 20_000
        runWithDeadline(30, "a burst") {
            for _ in 0..<events { handler.handleEvent { _ in } }
            // Every delivery has run and every drain scheduled has given the queue back or
            // ended its slice (after its last linger).
            XCTAssertTrue(
                waitUntil(20) {
                    let ended =
                        statistics.queueGivenBack.load(ordering: .relaxed)
                        + statistics.sliceEnded.load(ordering: .relaxed)
                    return statistics.deliveries.load(ordering: .relaxed) == events
                        && ended == statistics.drainsScheduled.load(ordering: .relaxed)
                })
        }
        let drains = statistics.drainsScheduled.load(ordering: .relaxed)
        XCTAssertGreaterThan(statistics.lingers.load(ordering: .relaxed), 0)
        // A drain per event would be one wake-up of the queue's thread per event.
        XCTAssertLessThan(drains, events / 10, "\(drains) drains scheduled for a burst of \(events) events")
        withExtendedLifetime(source) {}
    }
}
