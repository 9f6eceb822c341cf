import Foundation
@_spi(Benchmarks) @testable import MediaEvents
import TestSupport
import XCTest

/// Races on real threads released together. MediaMetaChanged is sent from inside `setMeta`
/// on the calling thread, so `setMeta` loops are real libvlc deliveries on threads we own.
final class StressTests: XCTestCase {
    /// After `cancel()` returns no new delivery begins: each delivering thread may finish at
    /// most one delivery that had already begun. A second, never-cancelled subscription proves
    /// the events kept flowing (its count is exact).
    func testCancel_whenRacingDeliveriesOnRealThreads_noNewDeliveryBeginsAfterReturn() {
        for mode in DispatchMode.allCases {
            for _ in 0..<10 {
                let (configuration, queue) = mode.make()
                let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
                let perThread = Locked<[UInt: Int]>([:])
                let total = Counter()
                let witness = Counter()
                let token = media.observe(.metaChanged) { _ in
                    total.increment()
                    perThread.withLock { $0[currentThreadID(), default: 0] += 1 }
                }
                let witnessToken = media.observe(.metaChanged) { _ in witness.increment() }
                let atCancel = Locked<[UInt: Int]>([:])
                let senders = 7, perSender = 150
                startThreads(count: senders + 1, name: "cancel-race") { index in
                    if index == 0 {
                        _ = waitUntil(10, poll: 0.0005) { total.count >= 20 }
                        token.cancel()
                        let snapshot = perThread.withLock { $0 }
                        atCancel.withLock { $0 = snapshot }
                        return
                    }
                    for n in 0..<perSender { media.setMetaOnCallingThread(.title, "\(index)-\(n)") }
                }
                queue?.queue.sync {}  // async mode: let queued deliveries run
                let expected = senders * perSender
                XCTAssertTrue(waitUntil(20) { witness.count == expected }, "\(mode): witness saw \(witness.count)")
                XCTAssertEqual(witness.count, expected, "\(mode)")
                let final = perThread.withLock { $0 }
                let snapshot = atCancel.withLock { $0 }
                for (thread, count) in final {
                    let late = count - (snapshot[thread] ?? 0)
                    XCTAssertLessThanOrEqual(late, 1, "\(mode): \(late) deliveries began after cancel() returned")
                }
                XCTAssertLessThan(total.count, expected + 1)
                witnessToken.cancel()
            }
        }
    }

    /// Subscribe/cancel storms while events flow: the hub ends with only the permanent
    /// subscription, which saw every event exactly once.
    func testObserveAndCancel_whenStormingWhileEventsFlow_countsStayExact() {
        for mode in DispatchMode.allCases {
            let (configuration, queue) = mode.make()
            let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
            let permanent = Counter()
            let permanentToken = media.observe(.metaChanged) { _ in permanent.increment() }
            let stormDeliveries = Counter()
            let senders = 4, perSender = 300, subscribers = 4, perSubscriber = 400
            startThreads(count: senders + subscribers, name: "storm") { index in
                if index < senders {
                    for n in 0..<perSender { media.setMetaOnCallingThread(.artist, "\(n)") }
                } else {
                    for n in 0..<perSubscriber {
                        let token = media.observe(.metaChanged) { _ in stormDeliveries.increment() }
                        if n % 2 == 0 { token.cancel() }  // the other half cancel by deinit
                    }
                }
            }
            queue?.queue.sync {}
            let expected = senders * perSender
            XCTAssertTrue(waitUntil(20) { permanent.count == expected }, "\(mode): \(permanent.count)")
            XCTAssertEqual(permanent.count, expected, "\(mode)")
            XCTAssertEqual(media.eventHub.sinkCount, 1, "\(mode): storm subscriptions left behind")
            permanentToken.cancel()
            XCTAssertEqual(media.eventHub.sinkCount, 0)
        }
    }

    /// The last outside reference goes away while 8 threads send events: every event sent
    /// while a thread held the media is delivered (the delivery keeps the object alive), the
    /// completion runs exactly once and after the last delivery, and the media is freed.
    func testMediaDropped_whileEventsInFlight_deliversEverythingThenCompletesOnce() {
        for mode in DispatchMode.allCases {
            for _ in 0..<10 {
                let (configuration, _) = mode.make()
                let holder = Box<VLCMedia>(makeMedia(SharedMedia.shortWAV, configuration: configuration))
                let weakMedia = WeakBox(holder.current!)
                let delivered = Counter()
                let completions = Recorder<Int>()
                let token = holder.current!.observe(
                    .metaChanged,
                    onCompletion: {
                        completions.record(delivered.count)
                    }
                ) { _ in delivered.increment() }
                let senders = 8, perSender = 100
                let held = (0..<senders).map { _ in Box<VLCMedia>(holder.current) }
                startThreads(count: senders, name: "drop-in-flight") { index in
                    if index == 0 { holder.clear() }
                    guard let media = held[index].current else { return }
                    held[index].clear()
                    for n in 0..<perSender { media.setMetaOnCallingThread(.title, "\(n)") }
                }
                XCTAssertTrue(completions.wait(forCount: 1, timeout: 20), "\(mode): no completion")
                XCTAssertTrue(waitUntil(20) { weakMedia.value == nil }, "\(mode): media never freed")
                XCTAssertEqual(completions.values, [senders * perSender], "\(mode): completion count/order")
                XCTAssertEqual(delivered.count, senders * perSender)
                XCTAssertFalse(token.isActive)
            }
        }
    }

    /// A playing player is dropped while progress events flow and 8 threads subscribe and
    /// cancel: no crash, no hang, each surviving subscription completes exactly once, nothing
    /// is delivered after its completion, and the player is freed.
    func testPlayerDropped_whilePlayingAndStorming_completesOnceAndFrees() {
        for mode in DispatchMode.allCases {
            for round in 0..<3 {
                let (configuration, _) = mode.make()
                let completions = Counter()
                let lateEvents = Counter()
                let weakPlayer = Recorder<WeakBox<VLCMediaPlayer>>()
                let survivors = Recorder<EventSubscription>()
                let ok = runWithDeadline(40, "\(mode) round \(round)") {
                    let holder = Box<VLCMediaPlayer>(
                        VLCMediaPlayer(
                            media: makeMedia(SharedMedia.twoSecondWAV), library: TestLibrary.shared,
                            configuration: configuration))
                    let player = holder.current!
                    weakPlayer.record(WeakBox(player))
                    let progress = EventLog<MediaPlayerEvent>()
                    let done = Counter()
                    survivors.record(
                        player.observe(
                            .timeChanged, .positionChanged, .endReached,
                            onCompletion: {
                                // `done` first: the test waits for `completions`, then
                                // reads what `done` decided.
                                done.increment(); completions.increment()
                            }
                        ) { event in
                            if done.count > 0 { lateEvents.increment() }
                            progress.record(event)
                        })
                    player.play()
                    XCTAssertTrue(progress.wait(for: .timeChanged), "\(mode): no progress")
                    startThreads(count: 8, name: "player-storm") { index in
                        if index == 0 {
                            usleep(2_000)
                            holder.clear()
                            return
                        }
                        for n in 0..<100 {
                            let token = player.observe(.timeChanged, onCompletion: { completions.increment() }) { _ in
                                _ = n
                            }
                            // A cancelled one gets no completion.
                            if n % 10 == 0 { survivors.record(token) } else { token.cancel() }
                        }
                    }
                    _ = player  // the storm's last strong reference ends with this closure
                }
                guard ok else { return }
                let expected = 1 + 7 * 10
                XCTAssertTrue(
                    waitUntil(30) { completions.count == expected },
                    "\(mode): \(completions.count) of \(expected) completions")
                XCTAssertTrue(waitUntil(30) { weakPlayer.values.first?.value == nil }, "\(mode): player never freed")
                usleep(50_000)
                XCTAssertEqual(completions.count, expected, "\(mode): a completion ran twice")
                XCTAssertEqual(lateEvents.count, 0, "\(mode): event delivered after completion")
                XCTAssertTrue(survivors.values.allSatisfy { !$0.isActive })
            }
        }
    }

    /// The player's deinit is safe on any thread: 8 playing players are released at once on
    /// 8 real threads.
    func testPlayerDeinit_whenReleasedOnManyThreadsAtOnce_isSafe() {
        let completions = Counter()
        let holders = (0..<8).map { _ in
            Box<VLCMediaPlayer>(VLCMediaPlayer(media: makeMedia(SharedMedia.twoSecondWAV), library: TestLibrary.shared))
        }
        let playing = Counter()
        let tokens = holders.map { holder in
            holder.current!.observe(.playing, onCompletion: { completions.increment() }) { _ in playing.increment() }
        }
        holders.forEach { $0.current?.play() }
        XCTAssertTrue(playing.wait(forAtLeast: 8, timeout: 30), "only \(playing.count) players started")
        startThreads(count: 8, name: "player-release") { index in holders[index].clear() }
        XCTAssertTrue(completions.wait(forAtLeast: 8, timeout: 30))
        XCTAssertEqual(completions.count, 8)
        XCTAssertTrue(tokens.allSatisfy { !$0.isActive })
    }
}
