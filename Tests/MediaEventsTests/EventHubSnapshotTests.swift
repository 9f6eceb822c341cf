// The hub's lock-free publishing: a snapshot of the sinks that a change retires, freed once
// no publish can read it. A fake source is enough: the hub's logic does not involve libvlc
// (StressTests storm the same code with real libvlc deliveries).

import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// Counts its deinitializations: what a subscription's closure keeps alive.
private final class Captured: Sendable {
    let freed: Counter

    init(_ freed: Counter) { self.freed = freed }

    deinit { freed.increment() }
}

final class EventHubSnapshotTests: XCTestCase {
    func testDroppedSubscription_whenNoPublishRuns_freesWhatItsHandlerHeldAtOnce() {
        let source = FakeSource()
        let freed = Counter()
        var token: EventSubscription? = {
            let captured = Captured(freed)
            return source.observe { _ in _ = captured }
        }()
        // The publish makes the snapshot that then holds the sink too.
        source.eventHub.publish(.state(1))
        XCTAssertEqual(freed.count, 0)
        XCTAssertNotNil(token)
        token = nil
        XCTAssertEqual(freed.count, 1, "the retired snapshot must be freed by the change when no publish runs")
        source.eventHub.publish(.state(2))
        XCTAssertEqual(source.eventHub.sinkCount, 0)
    }

    func testDroppedSubscription_whenDroppedInsideAHandler_isFreedWhenThatPublishEnds() {
        let source = FakeSource()
        let freed = Counter()
        let calls = Counter()
        let token = Locked<EventSubscription?>(nil)
        let freedDuringPublish = Locked<Int?>(nil)
        token.withLock { token in
            let captured = Captured(freed)
            token = source.observe { _ in
                _ = captured
                calls.increment()
            }
        }
        // A second sink drops the first one's token while the publish reads the snapshot
        // that holds it: it cannot be freed until that publish ends.
        let dropper = source.observe { _ in
            let dropped = token.withLock { token -> EventSubscription? in
                defer { token = nil }
                return token
            }
            withExtendedLifetime(dropped) {}
            freedDuringPublish.withLock { $0 = freed.count }
        }
        source.eventHub.publish(.state(1))
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(freedDuringPublish.withLock { $0 }, 0, "a snapshot in use by a publish must not be freed")
        XCTAssertEqual(freed.count, 1, "the publish that ended last must free the retired snapshot")
        source.eventHub.publish(.state(2))
        XCTAssertEqual(calls.count, 1, "a dropped subscription receives nothing more")
        dropper.cancel()
    }

    /// A publish that never ends (its handler blocked) while another thread subscribes,
    /// publishes and drops, 50 times: every event still reaches its subscriber, the hub holds
    /// no more than `maximumRetired` retired snapshots, and all is freed once the blocked
    /// publish returns.
    func testChangesWhileAPublishRuns_retireAtMostAFewSnapshots_andAllIsFreedWhenItEnds() {
        let source = FakeSource()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let blocker = source.observe(.state) { _ in
            entered.signal()
            _ = proceed.wait(timeout: .now() + 30)
        }
        let blockedPublishEnded = DispatchSemaphore(value: 0)
        Thread {
            source.eventHub.publish(.state(0))
            blockedPublishEnded.signal()
        }.start()
        XCTAssertEqual(entered.wait(timeout: .now() + 30), .success, "the blocking handler never ran")
        let freed = Counter()
        let received = Counter()
        for n in 0..<50 {
            let captured = Captured(freed)
            let token = source.observe(.time) { event in
                _ = captured
                if event == .time(n) { received.increment() }
            }
            source.eventHub.publish(.time(n))
            withExtendedLifetime(token) {}
        }
        XCTAssertEqual(received.count, 50, "each subscription receives the event published after it")
        XCTAssertLessThanOrEqual(source.eventHub.retiredCount, EventHub<FakeEvent>.maximumRetired)
        proceed.signal()
        XCTAssertEqual(blockedPublishEnded.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(source.eventHub.retiredCount, 0, "the last publish to end frees what was retired")
        XCTAssertEqual(freed.count, 50)
        blocker.cancel()
    }

    /// Publishes on several threads while another subscribes and drops subscriptions: a
    /// subscription held throughout sees every event, and once the threads are done every
    /// dropped subscription's closure has been freed (none stays retired for want of a
    /// publish or change that frees it).
    func testPublishAndChurn_onRealThreads_deliversEveryEventAndFreesEverySnapshot() {
        for round in 0..<20 {
            let source = FakeSource()
            let seen = Counter()
            let permanent = source.observe { _ in seen.increment() }
            let made = Counter()
            let freed = Counter()
            let publishers = 3
            let perPublisher = 2_000
            let finished = Counter()
            startThreads(count: publishers + 1, name: "hub-churn") { index in
                if index < publishers {
                    for n in 0..<perPublisher { source.eventHub.publish(.time(n)) }
                    finished.increment()
                    return
                }
                while finished.count < publishers {
                    made.increment()
                    let captured = Captured(freed)
                    let token = source.observe(.time) { _ in _ = captured }
                    // Dropped while other threads may be publishing a snapshot holding it.
                    withExtendedLifetime(token) {}
                }
            }
            XCTAssertEqual(seen.count, publishers * perPublisher, "round \(round)")
            XCTAssertEqual(freed.count, made.count, "round \(round): retired snapshots left holding subscriptions")
            XCTAssertEqual(source.eventHub.sinkCount, 1)
            permanent.cancel()
        }
    }
}
