import Dispatch
import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// A stand-in for a wrapper: records where its deinit ran.
private final class Probe: Sendable {
    let id: Int
    let onDeinit: @Sendable (_ thread: UInt, _ onReleaseQueue: Bool) -> Void
    init(id: Int = 0, onDeinit: @escaping @Sendable (UInt, Bool) -> Void = { _, _ in }) {
        self.id = id
        self.onDeinit = onDeinit
    }
    deinit { onDeinit(currentThreadID(), ServiceQueues.isOnReleaseQueue) }
}

/// A configuration written by a user, not one of the library's: the same-queue guard must
/// apply to it too.
private struct UserConfiguration: EventsConfiguring {
    let queue: DispatchQueue
    var dispatchQueue: DispatchQueue? { queue }
    var isAsync: Bool { false }
}

private struct DeinitRecord: Sendable {
    let thread: UInt
    let onReleaseQueue: Bool
}

final class EventsHandlerTests: XCTestCase {
    func testHandleEvent_whenObjectGone_doesNotRunBody() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            var probe: Probe? = Probe()
            let handler = EventsHandler(object: probe!, configuration: configuration)
            probe = nil
            XCTAssertNil(handler.object, "\(mode)")
            let ran = Counter()
            handler.handleEvent { _ in ran.increment() }
            handler.handle(1, sender: 0) { _, _ in ran.increment() }
            if let queue = configuration.dispatchQueue { queue.sync {} }
            XCTAssertEqual(ran.count, 0, "\(mode)")
        }
    }

    func testHandleEvent_whenAsyncAndLastReferenceDroppedBeforeBodyRuns_bodyStillSeesObject() {
        let marked = MarkedQueue(label: "test.async.keepalive")
        let deinits = Recorder<DeinitRecord>()
        var probe: Probe? = Probe(id: 42) { deinits.record(DeinitRecord(thread: $0, onReleaseQueue: $1)) }
        let handler = EventsHandler(
            object: probe!,
            configuration: EventsQueueConfiguration(queue: marked.queue, isAsync: true))
        let gate = DispatchSemaphore(value: 0)
        marked.queue.async { gate.wait() }  // hold the queue so the delivery stays queued
        let seen = Recorder<Int>()
        let onQueue = Recorder<Bool>()
        handler.handleEvent { object in
            onQueue.record(marked.isCurrent)
            seen.record(object.id)  // last: the test waits for it, then reads both
        }
        let weakProbe = WeakBox(probe!)
        probe = nil  // the test's last reference: only the queued delivery holds the object now
        XCTAssertNotNil(weakProbe.value, "the queued delivery must keep the object alive")
        XCTAssertEqual(deinits.count, 0)
        gate.signal()
        XCTAssertTrue(seen.wait(forCount: 1, timeout: 20))
        XCTAssertEqual(seen.values, [42])
        XCTAssertEqual(onQueue.values, [true])
        XCTAssertTrue(deinits.wait(forCount: 1, timeout: 20), "the object was never freed")
        XCTAssertEqual(deinits.values.map(\.onReleaseQueue), [true])
        XCTAssertNil(weakProbe.value)
    }

    /// The delivery holds the last reference: deinit must run on the release queue, never on
    /// the thread that called `handleEvent` (that thread is libvlc's, inside its event lock).
    func testHandleEvent_whenDeliveryHeldLastReference_deinitRunsOnReleaseQueue() {
        for mode in DispatchMode.allCases {
            for round in 0..<50 {
                let (configuration, _) = mode.make()
                let deinits = Recorder<DeinitRecord>()
                let holder = Box<Probe>(
                    Probe(id: round) { deinits.record(DeinitRecord(thread: $0, onReleaseQueue: $1)) })
                let handler = EventsHandler(object: holder.current!, configuration: configuration)
                let caller = Recorder<UInt>()
                let bodyRan = Counter()
                runWithDeadline(20, "\(mode) delivery") {
                    caller.record(currentThreadID())
                    handler.handleEvent { object in
                        holder.clear()  // drop every other reference from inside the body
                        XCTAssertEqual(object.id, round)
                        bodyRan.increment()
                    }
                }
                XCTAssertTrue(deinits.wait(forCount: 1, timeout: 20), "\(mode): object never freed")
                XCTAssertEqual(bodyRan.count, 1, "\(mode)")
                XCTAssertEqual(deinits.count, 1, "\(mode): deinit ran twice")
                guard let record = deinits.values.first, let callerThread = caller.values.first else { continue }
                XCTAssertTrue(record.onReleaseQueue, "\(mode) round \(round): deinit not on the release queue")
                XCTAssertNotEqual(record.thread, callerThread, "\(mode) round \(round): deinit on the caller's thread")
                XCTAssertNil(handler.object)
            }
        }
    }

    /// The drain returns the borrows of a run of one handler's deliveries together, after the
    /// run: a handler of the same batch that waits for teardowns must still wait for an object
    /// whose deliveries ran just before it and whose last reference is gone.
    func testWaitForPendingTeardowns_inAHandlerAfterAnotherObjectsDeliveries_waitsForThatObject() {
        for round in 0..<30 {
            let queue = DispatchQueue(label: "run-then-wait-\(round)")
            let configuration = EventsQueueConfiguration(queue: queue, isAsync: true)
            let freed = Counter()
            let dropped = Box<Probe>(Probe(id: round) { _, _ in freed.increment() })
            let waiter = Probe(id: -1)
            let droppedHandler = EventsHandler(object: dropped.current!, configuration: configuration)
            let waiterHandler = EventsHandler(object: waiter, configuration: configuration)
            let outcome = Recorder<(waited: Bool, freedBeforeReturn: Bool)>()
            let gate = DispatchSemaphore(value: 0)
            // Held, so that all four deliveries are queued before the drain takes them as one batch.
            queue.async { gate.wait() }
            // The first takes the lease (and returns its borrow at once, as it arms the expiry);
            // the next two borrow it and end as one run.
            for _ in 0..<3 { droppedHandler.handleEvent { _ in } }
            dropped.clear()
            waiterHandler.handleEvent { _ in
                let waited = VLCLibrary.waitForPendingTeardowns(timeout: 10)
                outcome.record((waited, freed.count == 1))
            }
            gate.signal()
            XCTAssertTrue(outcome.wait(forCount: 1, timeout: 20), "round \(round): the waiting handler never ran")
            guard let result = outcome.values.first else { continue }
            XCTAssertTrue(result.waited, "round \(round): the wait gave up")
            XCTAssertTrue(result.freedBeforeReturn, "round \(round): the wait returned before the object was freed")
            withExtendedLifetime(waiter) {}
        }
    }

    func testHandleEvent_whenSyncOntoTheCurrentQueue_runsInline() {
        let marked = MarkedQueue(label: "test.sync.same")
        let configurations: [(String, any EventsConfiguring)] = [
            ("EventsQueueConfiguration", EventsQueueConfiguration(queue: marked.queue, isAsync: false)),
            ("user conformance", UserConfiguration(queue: marked.queue)),
        ]
        for (label, configuration) in configurations {
            let probe = Probe()
            defer { withExtendedLifetime(probe) {} }
            let handler = EventsHandler(object: probe, configuration: configuration)
            let order = Recorder<String>()
            runWithDeadline(20, "\(label): sync onto the current queue") {
                marked.queue.sync {
                    handler.handleEvent { _ in order.record(marked.isCurrent ? "body on queue" : "body off queue") }
                    order.record("returned")
                }
            }
            XCTAssertEqual(order.values, ["body on queue", "returned"], label)
        }
    }

    /// A queue that targets the delivery queue runs on it too: `sync` from there would deadlock.
    func testHandleEvent_whenSyncFromAQueueTargetingTheDeliveryQueue_runsInline() {
        let target = MarkedQueue(label: "test.sync.target")
        let child = MarkedQueue(label: "test.sync.child", target: target.queue)
        let probe = Probe()
        let handler = EventsHandler(
            object: probe,
            configuration: EventsQueueConfiguration(queue: target.queue, isAsync: false))
        let ran = Counter()
        runWithDeadline(20, "sync from a child queue") {
            child.queue.sync { handler.handleEvent { _ in ran.increment() } }
        }
        XCTAssertEqual(ran.count, 1)
        withExtendedLifetime(probe) {}
    }

    func testHandleEvent_whenSyncFromAnotherThread_runsOnTheQueueBeforeReturning() {
        let marked = MarkedQueue(label: "test.sync.other")
        let probe = Probe()
        let handler = EventsHandler(
            object: probe,
            configuration: EventsQueueConfiguration(queue: marked.queue, isAsync: false))
        let order = Recorder<String>()
        runWithDeadline(20, "sync delivery") {
            handler.handleEvent { _ in order.record(marked.isCurrent ? "on queue" : "off queue") }
            order.record("returned")
        }
        XCTAssertEqual(order.values, ["on queue", "returned"])
        withExtendedLifetime(probe) {}
    }

    func testHandleEvent_whenAsync_preservesOrder() {
        let marked = MarkedQueue(label: "test.async.order")
        let probe = Probe()
        let handler = EventsHandler(
            object: probe,
            configuration: EventsQueueConfiguration(queue: marked.queue, isAsync: true))
        let seen = Recorder<Int>()
        let offQueue = Counter()
        let total = 20_000
        runWithDeadline(30, "async burst") {
            for index in 0..<total {
                handler.handle(index, sender: 0) { _, value in
                    if !marked.isCurrent { offQueue.increment() }
                    seen.record(value)
                }
            }
            XCTAssertTrue(seen.wait(forCount: total, timeout: 25))
        }
        let values = seen.values
        XCTAssertEqual(values.count, total)
        XCTAssertTrue(values == Array(0..<total), "deliveries out of order")
        XCTAssertEqual(offQueue.count, 0)
        withExtendedLifetime(probe) {}
    }

    /// Many threads deliver at once while the object's last outside reference goes away:
    /// every delivery that began sees a live object, and deinit runs once, on the release queue.
    func testHandleEvent_whenManyThreadsDeliverWhileObjectDropped_deinitOnceNeverOnADeliveringThread() {
        let droppedByTest = Counter()
        for mode in DispatchMode.allCases {
            for _ in 0..<20 {
                let (configuration, _) = mode.make()
                let deinits = Recorder<DeinitRecord>()
                let holder = Box<Probe>(Probe(id: 7) { deinits.record(DeinitRecord(thread: $0, onReleaseQueue: $1)) })
                let handler = EventsHandler(object: holder.current!, configuration: configuration)
                let delivered = Counter()
                let wrongObject = Counter()
                let deliverers = Recorder<UInt>()
                startThreads(count: 8, name: "deliver") { index in
                    if index == 0 {
                        holder.clear()
                        return
                    }
                    deliverers.record(currentThreadID())
                    for _ in 0..<200 {
                        handler.handleEvent { object in
                            if object.id != 7 { wrongObject.increment() }
                            delivered.increment()
                        }
                    }
                }
                XCTAssertTrue(deinits.wait(forCount: 1, timeout: 20), "\(mode): never freed")
                XCTAssertEqual(deinits.count, 1)
                // The test's own drop may be the last release (then deinit runs on the dropping
                // thread, as for any Swift object); a delivering thread must never run it.
                if let record = deinits.values.first {
                    XCTAssertFalse(deliverers.values.contains(record.thread), "\(mode): deinit on a delivering thread")
                    if !record.onReleaseQueue { droppedByTest.increment() }
                }
                XCTAssertEqual(wrongObject.count, 0)
                XCTAssertLessThanOrEqual(delivered.count, 7 * 200)
            }
        }
    }
}

/// A weak reference a test can look at after dropping its strong ones.
final class WeakBox<Object: AnyObject & Sendable>: Sendable {
    private let storage: Locked<WeakStorage>
    private struct WeakStorage: @unchecked Sendable {  // only touched under the Locked mutex
        weak var object: Object?
    }
    init(_ object: Object) { storage = Locked(WeakStorage(object: object)) }
    var value: Object? { storage.withLock { $0.object } }
}
