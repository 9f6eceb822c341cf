import Dispatch
@testable import MediaEvents
import XCTest

/// Objects that share an asynchronous delivery queue must see their events in the order
/// the handlers were called, across objects (a player and its media on one queue).
final class SharedQueueOrderTests: XCTestCase {
    private final class Source: Sendable {
        let name: Int
        init(name: Int) { self.name = name }
    }

    func testHandleEvent_whenObjectsShareAnAsyncQueue_keepsCallOrderAcrossObjects() {
        let queue = DispatchQueue(label: "shared-order")
        let configuration = EventsQueueConfiguration(queue: queue, isAsync: true)
        let sources = (0..<3).map { Source(name: $0) }
        let handlers = sources.map { EventsHandler(object: $0, configuration: configuration) }
        let seen = Recorder<Int>()
        let total = 30_000
        runWithDeadline(30, "interleaved deliveries") {
            for i in 0..<total {
                // Hold the queue now and then so deliveries of all objects pile up in one batch.
                if i % 5_000 == 0 { queue.async { usleep(2_000) } }
                handlers[i % 3].handleEvent { _ in seen.record(i) }
            }
            XCTAssertTrue(seen.wait(forCount: total, timeout: 20))
        }
        XCTAssertEqual(seen.values, Array(0..<total))
        withExtendedLifetime(sources) {}
    }
}
