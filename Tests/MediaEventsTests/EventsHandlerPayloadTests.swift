import Dispatch
import Foundation
@testable import MediaEvents
import XCTest

private final class Target: Sendable {
    let id: Int
    let onDeinit: @Sendable (_ onReleaseQueue: Bool) -> Void
    init(id: Int, onDeinit: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.id = id
        self.onDeinit = onDeinit
    }
    deinit { onDeinit(ServiceQueues.isOnReleaseQueue) }
}

/// `handleEvent(_:_:)`, the entry point that hands the event's values over as a payload: the
/// same guarantees as `handleEvent(_:)`.
final class EventsHandlerPayloadTests: XCTestCase {
    func testHandleEventWithPayload_deliversPayloadWithObject_inEveryMode() {
        for mode in DispatchMode.allCases {
            let (configuration, queue) = mode.make()
            let target = Target(id: 7)
            let handler = EventsHandler(object: target, configuration: configuration)
            let seen = Recorder<String>()
            runWithDeadline(20, "\(mode) delivery") {
                for value in 0..<3 {
                    handler.handleEvent(value) { object, value in
                        seen.record("\(object.id):\(value):\(DeliveryContext.isInDelivery)")
                    }
                }
            }
            if let queue { queue.queue.sync {} }
            XCTAssertEqual(seen.values, ["7:0:true", "7:1:true", "7:2:true"], "\(mode)")
            withExtendedLifetime(target) {}
        }
    }

    func testHandleEventWithPayload_whenObjectGone_doesNotRunBody() {
        for mode in DispatchMode.allCases {
            let (configuration, queue) = mode.make()
            var target: Target? = Target(id: 1)
            let handler = EventsHandler(object: target!, configuration: configuration)
            target = nil
            let ran = Counter()
            handler.handleEvent(1) { _, _ in ran.increment() }
            if let queue { queue.queue.sync {} }
            XCTAssertEqual(ran.count, 0, "\(mode)")
        }
    }

    /// Queued, the delivery keeps the object; when it held the last reference, `deinit` runs
    /// on the release queue.
    func testHandleEventWithPayload_whenAsyncAndLastReferenceDropped_bodySeesObjectAndDeinitOnReleaseQueue() {
        let marked = MarkedQueue(label: "test.payload.async")
        let deinits = Recorder<Bool>()
        var target: Target? = Target(id: 42) { deinits.record($0) }
        let handler = EventsHandler(
            object: target!,
            configuration: EventsQueueConfiguration(queue: marked.queue, isAsync: true))
        let gate = DispatchSemaphore(value: 0)
        marked.queue.async { gate.wait() }
        let seen = Recorder<String>()
        handler.handleEvent("payload") { object, payload in
            seen.record("\(object.id) \(payload) \(marked.isCurrent)")
        }
        target = nil
        XCTAssertEqual(deinits.count, 0, "the queued delivery must keep the object alive")
        gate.signal()
        XCTAssertTrue(seen.wait(forCount: 1, timeout: 20))
        XCTAssertEqual(seen.values, ["42 payload true"])
        XCTAssertTrue(deinits.wait(forCount: 1, timeout: 20), "the object was never freed")
        XCTAssertEqual(deinits.values, [true])
    }
}
