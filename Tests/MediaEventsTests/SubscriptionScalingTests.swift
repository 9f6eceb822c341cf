import Foundation
@_spi(Benchmarks) @testable import MediaEvents
import TestSupport
import XCTest

/// Many subscriptions on one object, cancelled in random order from real threads while
/// events flow: the hub's slot index must keep exactly the live subscriptions, in order.
final class SubscriptionScalingTests: XCTestCase {
    func testCancel_when100kSubscriptionsCancelledInRandomOrderOnThreads_exactlyTheLiveOnesReceive() {
        let count = 100_000
        let media = makeMedia(SharedMedia.shortWAV)
        let hits = Locked([Int](repeating: 0, count: count))
        // Subscription order, checked on one event: each handler appends its index.
        let order = Locked<[Int]?>(nil)
        var tokens: [EventSubscription] = []
        tokens.reserveCapacity(count)
        for index in 0..<count {
            tokens.append(
                media.observe(.metaChanged) { _ in
                    hits.withLock { $0[index] += 1 }
                    order.withLock { $0?.append(index) }
                })
        }
        order.withLock { $0 = [] }
        media.setMetaOnCallingThread(.title, "all")
        XCTAssertEqual(order.withLock { $0 }, Array(0..<count), "every subscription, in subscription order")
        order.withLock { $0 = nil }
        XCTAssertEqual(media.eventHub.sinkCount, count)

        var generator = SplitMix64(seed: 0x15)
        let shuffled = Array(0..<count).shuffled(using: &generator)
        let firstHalf = Array(shuffled[..<(count / 2)])
        let secondHalf = Array(shuffled[(count / 2)...])
        let shared = UncheckedSendable(tokens)
        let threads = 8

        // Half of them, from 8 threads, while a ninth sends events all along.
        let cancelling = Locked(true)
        let senderDone = DispatchSemaphore(value: 0)
        let sender = Thread {
            while cancelling.withLock({ $0 }) { media.setMetaOnCallingThread(.title, "during") }
            senderDone.signal()
        }
        sender.start()
        XCTAssertTrue(
            startThreads(count: threads, timeout: 60, name: "cancel-first-half") { thread in
                for position in stride(from: thread, to: firstHalf.count, by: threads) {
                    shared.value[firstHalf[position]].cancel()
                }
            })
        cancelling.withLock { $0 = false }
        XCTAssertEqual(media.eventHub.sinkCount, count - firstHalf.count)

        // The sender's last event is delivered inside its `setMeta` (inline, on its thread):
        // once its loop has ended no delivery of it is left. A fixed pause was not enough
        // under ThreadSanitizer, where that event to 50 000 handlers outlasted 0.2 s and
        // reached the tail of the list after the count below had started.
        XCTAssertEqual(senderDone.wait(timeout: .now() + 60), .success, "the sender's last event never ended")
        let before = hits.withLock { $0 }
        order.withLock { $0 = [] }
        media.setMetaOnCallingThread(.title, "half")
        let after = hits.withLock { $0 }
        let live = Set(secondHalf)
        for index in 0..<count where after[index] - before[index] != (live.contains(index) ? 1 : 0) {
            XCTFail(
                "subscription \(index) (live: \(live.contains(index))) got \(after[index] - before[index]) of 1 event")
            break
        }
        XCTAssertEqual(order.withLock { $0 }, secondHalf.sorted(), "the live ones, still in subscription order")
        order.withLock { $0 = nil }
        XCTAssertTrue(secondHalf.allSatisfy { tokens[$0].isActive })
        XCTAssertTrue(firstHalf.allSatisfy { !tokens[$0].isActive })

        // The rest, from 8 threads.
        XCTAssertTrue(
            startThreads(count: threads, timeout: 60, name: "cancel-second-half") { thread in
                for position in stride(from: thread, to: secondHalf.count, by: threads) {
                    shared.value[secondHalf[position]].cancel()
                }
            })
        XCTAssertEqual(media.eventHub.sinkCount, 0)
        let settled = hits.withLock { $0 }
        media.setMetaOnCallingThread(.title, "none")
        XCTAssertEqual(hits.withLock { $0 }, settled, "no cancelled subscription may receive an event")

        // The hub is usable again after it emptied.
        let again = Counter()
        let token = media.observe(.metaChanged) { _ in again.increment() }
        media.setMetaOnCallingThread(.title, "again")
        XCTAssertEqual(again.count, 1)
        token.cancel()
    }
}
