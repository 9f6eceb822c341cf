import CLibVLC
import Foundation
import Glibc
@_spi(Benchmarks) @testable import MediaEvents
import Synchronization
import TestSupport
import XCTest

/// One test per re-entrancy case the library once got wrong (a trap, a deadlock, a late
/// delivery, a wait that never ended, a teardown on libvlc's thread). Each one fails on the
/// code that had the bug and checks exactly the guarantee the documentation states; every
/// test that could hang runs under a deadline, and races run on real threads.
final class ReentrancyCasesTests: XCTestCase {
    // MARK: 1. Concurrent cancel

    /// Shared state of the cancel race; atomics so the handshake costs no lock and TSan sees it.
    private final class CancelRace: Sendable {
        /// The round whose subscription is published in `token`.
        let round = Atomic<Int>(0)
        /// Arrivals at the start barrier: both cancellers of round r have arrived at 2r.
        let arrived = Atomic<Int>(0)
        /// Both cancellers of round r have finished their round at 2r.
        let finished = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        /// The rounds the first canceller completed.
        let completed = Atomic<Int>(0)
        let deliveries = Atomic<Int>(0)
        let violations = Atomic<Int>(0)
        let lateEntries = Atomic<Int>(0)
        let sets = Atomic<Int>(0)
        let token = Locked<EventSubscription?>(nil)
    }

    /// The newest round for which at least one `cancel()` has returned; an object of its own
    /// so that no counter written by the delivering thread shares its cache line.
    private final class ReturnedRound: Sendable {
        let round = Atomic<Int>(0)
    }

    private static func spin(until condition: () -> Bool) {
        var spins = 0
        while !condition() {
            spins += 1
            if spins & 31 == 0 { sched_yield() }
        }
    }

    /// Two threads cancel one subscription at the same instant while a third sends its events:
    /// once either `cancel()` has returned, no delivery to the handler may begin. (The old
    /// cancel let the losing caller return before the subscription was marked cancelled.)
    /// 100 000 rounds, or as many as 60 s allow past 2 000 (ThreadSanitizer on two cores that
    /// other programs keep busy makes each rendezvous of the three spinning threads slow).
    func testCancel_whenTwoThreadsCancelAtOnceWhileEventsFlow_noDeliveryBeginsAfterEitherReturns() {
        let rounds = 100_000
        let minimumRounds = 2_000
        let media = makeMedia(SharedMedia.shortWAV, configuration: EventsDefaultConfiguration())
        let race = CancelRace()
        let returned = ReturnedRound()
        /// What `returned` said just before the setter thread's current `setMeta` began.
        let sendStart = ReturnedRound()
        let start = DispatchTime.now()
        runWithDeadline(150, "cancel race") {
            startThreads(count: 3, timeout: 140, name: "cancel-linearizable") { index in
                switch index {
                case 0:
                    for r in 1...rounds {
                        if r > minimumRounds,
                            DispatchTime.now().uptimeNanoseconds > start.uptimeNanoseconds + 60_000_000_000
                        {
                            break
                        }
                        let token = media.observe(.metaChanged) { _ in
                            // Inline: this runs inside the setter thread's `setMeta`. The
                            // delivery began after a cancel returned if the flag was set
                            // before that `setMeta` was even called.
                            if sendStart.round.load(ordering: .relaxed) >= r {
                                race.violations.add(1, ordering: .relaxed)
                            }
                            // Looser: the flag is set when the handler starts. This also counts
                            // deliveries that had passed the library's check before the cancel
                            // (allowed: "one that already began may still finish").
                            if returned.round.load(ordering: .acquiring) >= r {
                                race.lateEntries.add(1, ordering: .relaxed)
                            }
                            race.deliveries.add(1, ordering: .relaxed)
                        }
                        race.token.withLock { $0 = token }
                        race.round.store(r, ordering: .releasing)
                        race.arrived.add(1, ordering: .acquiringAndReleasing)
                        Self.spin { race.arrived.load(ordering: .acquiring) >= 2 * r }
                        token.cancel()
                        returned.round.store(r, ordering: .releasing)
                        race.finished.add(1, ordering: .acquiringAndReleasing)
                        Self.spin { race.finished.load(ordering: .acquiring) >= 2 * r }
                        race.token.withLock { $0 = nil }
                        race.completed.store(r, ordering: .releasing)
                    }
                    race.stop.store(true, ordering: .releasing)
                case 1:
                    for r in 1...rounds {
                        Self.spin { race.round.load(ordering: .acquiring) >= r || race.stop.load(ordering: .acquiring) }
                        guard race.round.load(ordering: .acquiring) >= r else { break }
                        let token = race.token.withLock { $0 }
                        race.arrived.add(1, ordering: .acquiringAndReleasing)
                        Self.spin { race.arrived.load(ordering: .acquiring) >= 2 * r }
                        token?.cancel()
                        returned.round.store(r, ordering: .releasing)
                        race.finished.add(1, ordering: .acquiringAndReleasing)
                    }
                default:
                    var n = 0
                    while !race.stop.load(ordering: .acquiring) {
                        sendStart.round.store(returned.round.load(ordering: .acquiring), ordering: .relaxed)
                        media.setMetaOnCallingThread(.title, n & 1 == 0 ? "even" : "odd")
                        n += 1
                        if n & 3 == 0 { sched_yield() }
                    }
                    race.sets.store(n, ordering: .releasing)
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let violations = race.violations.load(ordering: .acquiring)
        let deliveries = race.deliveries.load(ordering: .acquiring)
        let completed = race.completed.load(ordering: .acquiring)
        print(
            "cancel race: \(completed) rounds in \(String(format: "%.2f", seconds)) s, "
                + "\(race.sets.load(ordering: .acquiring)) setMeta, \(deliveries) deliveries before a cancel, "
                + "\(violations) deliveries began after a cancel returned, "
                + "\(race.lateEntries.load(ordering: .acquiring)) handler entries after a cancel returned "
                + "(deliveries already past the check, allowed)")
        XCTAssertGreaterThanOrEqual(completed, minimumRounds, "the race ran too few rounds to test anything")
        XCTAssertEqual(violations, 0, "deliveries began after cancel() had returned")
        XCTAssertGreaterThan(deliveries, 0, "the race never delivered: it tested nothing")
        XCTAssertEqual(media.eventHub.sinkCount, 0, "cancelled subscriptions left in the hub")
    }

    // MARK: 2. Shadowed queue mark

    private final class Probe: Sendable {}

    /// A is delivered synchronously on Q, B asynchronously on R, which targets Q, so R has a
    /// mark of its own. A block of R owns Q: A's synchronous delivery from there must run
    /// inline (it used to see only R's mark and `Q.sync` trapped with SIGILL).
    /// Workaround: `SyncOntoCurrentQueue` (rule 14 of SendSites.md) — this test fails without it.
    func testSyncDelivery_whenSentFromBlockOfMarkedQueueTargetingItsQueue_runsInlineWithoutTrap() {
        for submit in ["sync", "async"] {
            let q = DispatchQueue(label: "cases.shadow.Q.\(submit)")
            let r = DispatchQueue(label: "cases.shadow.R.\(submit)", target: q)
            let a = makeMedia(SharedMedia.shortWAV, configuration: EventsQueueConfiguration(queue: q, isAsync: false))
            let b = makeMedia(SharedMedia.shortWAV, configuration: EventsQueueConfiguration(queue: r, isAsync: true))
            let qMark = QueueIdentity.mark(q)
            let seen = Recorder<(key: MetaKey, thread: UInt, onQ: Bool)>()
            let bToken = b.observe(.metaChanged) { _ in }
            let aToken = a.observe(.metaChanged) { event in
                if case .metaChanged(let key) = event {
                    seen.record((key, currentThreadID(), QueueIdentity.isCurrent(qMark)))
                }
            }
            let senderThread = Locked<UInt>(0)
            runWithDeadline(20, "R.\(submit): A's sync delivery onto Q from a block of R") {
                let body: @Sendable () -> Void = {
                    senderThread.withLock { $0 = currentThreadID() }
                    // libvlc sends MetaChanged from inside this call, on this thread.
                    a.setMetaOnCallingThread(.title, "shadowed")
                    // The public setter: queued (R runs on Q, a queue a sync configuration
                    // delivers to), and the value is readable at once.
                    a.setMeta(.artist, "queued")
                    XCTAssertEqual(a.meta(.artist), "queued")
                }
                if submit == "sync" {
                    r.sync(execute: body)
                } else {
                    let done = DispatchSemaphore(value: 0)
                    r.async {
                        body(); done.signal()
                    }
                    XCTAssertEqual(done.wait(timeout: .now() + 15), .success, "R.async block did not finish")
                }
                XCTAssertTrue(seen.wait(forCount: 2, timeout: 10), "R.\(submit): saw \(seen.values.map(\.key))")
            }
            let title = seen.values.first { $0.key == .title }
            XCTAssertNotNil(title, "R.\(submit): A's handler never ran for the inline event")
            XCTAssertEqual(title?.thread, senderThread.withLock { $0 }, "R.\(submit): not run inline on R's thread")
            XCTAssertEqual(title?.onQ, true, "R.\(submit): handler did not run on Q")
            XCTAssertEqual(
                seen.values.first { $0.key == .artist }?.onQ, true, "R.\(submit): queued set not delivered on Q")
            aToken.cancel()
            bToken.cancel()
        }
    }

    /// The same through `EventsHandler` directly: a sync handler on Q and an async handler on
    /// R (targeting Q) exist; an event handled by the sync one from a block of R runs inline.
    func testHandleEvent_whenSyncHandlerIsCalledFromBlockOfAsyncTargetingQueue_runsInline() {
        let q = DispatchQueue(label: "cases.direct.Q")
        let r = DispatchQueue(label: "cases.direct.R", target: q)
        let probe = Probe()
        let syncHandler = EventsHandler(
            object: probe, configuration: EventsQueueConfiguration(queue: q, isAsync: false))
        let asyncHandler = EventsHandler(
            object: probe, configuration: EventsQueueConfiguration(queue: r, isAsync: true))
        let qMark = QueueIdentity.mark(q)
        let ran = Recorder<(thread: UInt, onQ: Bool)>()
        let asyncRan = Counter()
        for submit in ["sync", "async"] {
            ran.removeAll()
            let blockThread = Locked<UInt>(0)
            runWithDeadline(20, "direct R.\(submit)") {
                let body: @Sendable () -> Void = {
                    blockThread.withLock { $0 = currentThreadID() }
                    asyncHandler.handleEvent { _ in asyncRan.increment() }
                    syncHandler.handleEvent { _ in ran.record((currentThreadID(), QueueIdentity.isCurrent(qMark))) }
                }
                if submit == "sync" {
                    r.sync(execute: body)
                } else {
                    let done = DispatchSemaphore(value: 0)
                    r.async {
                        body(); done.signal()
                    }
                    XCTAssertEqual(done.wait(timeout: .now() + 15), .success)
                }
            }
            XCTAssertEqual(ran.count, 1, "direct R.\(submit)")
            XCTAssertEqual(ran.values.first?.thread, blockThread.withLock { $0 }, "direct R.\(submit): not inline")
            XCTAssertEqual(ran.values.first?.onQ, true, "direct R.\(submit)")
        }
        XCTAssertTrue(asyncRan.wait(forAtLeast: 2, timeout: 10))
        withExtendedLifetime(probe) {}
    }

    // MARK: 3. waitForPendingEdits from item handlers

    private static func nativeCount(_ list: VLCMediaList) -> Int {
        Int(list.native.count)
    }

    /// Inside a blocking delivery of the list's own item event (sync queue configuration) the
    /// edit being applied is the one sending the event: the wait must return `false` at once.
    /// (It used to wait on the list's control queue from that queue's own delivery: trap.)
    func testWaitForPendingEdits_whenCalledFromItemAddedHandlerUnderSyncQueue_returnsFalseAtOnce() {
        let q = MarkedQueue(label: "cases.edits.sync")
        let results = Recorder<(result: Bool, onQ: Bool)>()
        runWithDeadline(30, "waitForPendingEdits in a sync itemAdded handler") {
            let list = VLCMediaList(
                library: TestLibrary.shared,
                configuration: EventsQueueConfiguration(queue: q.queue, isAsync: false))
            let weakList = WeakBox(list)
            let token = list.observe(.itemAdded) { _ in
                results.record((weakList.value?.waitForPendingEdits() ?? true, q.isCurrent))
            }
            list.append(makeMedia(SharedMedia.shortWAV))
            list.append(makeMedia(SharedMedia.twoSecondWAV))
            XCTAssertTrue(results.wait(forCount: 2, timeout: 20), "saw \(results.count) itemAdded")
            // From an ordinary thread it waits and succeeds.
            XCTAssertTrue(list.waitForPendingEdits())
            XCTAssertEqual(Self.nativeCount(list), 2)
            token.cancel()
        }
        XCTAssertEqual(results.values.map(\.result), [false, false], "must not wait inside a blocking delivery")
        XCTAssertEqual(results.values.map(\.onQ), [true, true])
    }

    /// From an asynchronous delivery the wait may block, and returns `true` once every edit
    /// requested before the call has been applied in libvlc.
    func testWaitForPendingEdits_whenCalledFromItemAddedHandlerUnderAsyncQueue_returnsTrueOnceApplied() {
        let q = MarkedQueue(label: "cases.edits.async")
        let results = Recorder<(result: Bool, requested: Int, applied: Int)>()
        runWithDeadline(30, "waitForPendingEdits in an async itemAdded handler") {
            let list = VLCMediaList(
                library: TestLibrary.shared,
                configuration: EventsQueueConfiguration(queue: q.queue, isAsync: true))
            let weakList = WeakBox(list)
            let token = list.observe(.itemAdded) { _ in
                guard let list = weakList.value else { return }
                let requested = list.count
                let result = list.waitForPendingEdits()
                results.record((result, requested, Self.nativeCount(list)))
            }
            for _ in 0..<3 { list.append(makeMedia(SharedMedia.shortWAV)) }
            XCTAssertTrue(results.wait(forCount: 3, timeout: 20), "saw \(results.count) itemAdded")
            XCTAssertTrue(list.waitForPendingEdits(), "ordinary thread")
            XCTAssertEqual(Self.nativeCount(list), 3)
            token.cancel()
        }
        for entry in results.values {
            XCTAssertTrue(entry.result, "async handler: the wait gave up")
            XCTAssertGreaterThanOrEqual(entry.applied, entry.requested, "returned before the edits were applied")
        }
    }

    // MARK: 4. Lock order under a sync configuration

    /// T sets the title on an ordinary thread (libvlc holds the media's event lock and waits
    /// for Q); Q's own blocks set the artist on the same media. The old direct `setMeta` on Q
    /// took the event lock in the other order: deadlock within milliseconds.
    func testSetMeta_whenOrdinaryThreadAndSyncDeliveryQueueSetMetaAtOnce_finishesWithFinalValues() {
        let q = MarkedQueue(label: "cases.lockorder")
        let count = 2000
        let media = makeMedia(
            SharedMedia.shortWAV, configuration: EventsQueueConfiguration(queue: q.queue, isAsync: false))
        let titles = Counter(), artists = Counter()
        let token = media.observe(.metaChanged) { event in
            if case .metaChanged(let key) = event {
                if key == .title { titles.increment() }
                if key == .artist { artists.increment() }
            }
        }
        let finished = runWithDeadline(60, "setMeta from T and from Q") {
            startThreads(count: 2, timeout: 55, name: "lock-order") { index in
                if index == 0 {
                    for i in 0..<count { media.setMeta(.title, "t\(i)") }
                } else {
                    for i in 0..<count { q.queue.async { media.setMeta(.artist, "q\(i)") } }
                }
            }
            q.queue.sync {}
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(media.meta(.artist), "q\(count - 1)", "pending value")
        XCTAssertEqual(media.meta(.title), "t\(count - 1)")
        // The queued sets are applied on the media's control queue, then delivered on Q.
        XCTAssertTrue(
            waitUntil(20) { artists.count == count && titles.count == count },
            "titles \(titles.count), artists \(artists.count)")
        XCTAssertEqual(titles.count, count, "MetaChanged(title) lost")
        XCTAssertEqual(artists.count, count, "MetaChanged(artist) lost")
        XCTAssertEqual(media.meta(.artist), "q\(count - 1)", "applied value")
        token.cancel()
    }

    // MARK: 5. waitForPendingTeardowns inside a delivery

    /// From EndReached (every configuration) the handler drops a media and a player and
    /// waits for teardowns: it must succeed quickly, not wait out the timeout for the lease
    /// of the player whose delivery is running.
    func testWaitForPendingTeardowns_whenCalledFromEndReachedHandler_returnsTrueWellBeforeTimeout() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make(label: "cases.teardowns")
            let results = Recorder<(ok: Bool, seconds: Double, mediaGone: Bool, playerGone: Bool)>()
            runWithDeadline(40, "\(mode): waitForPendingTeardowns in EndReached") {
                let player = VLCMediaPlayer(
                    media: makeMedia(SharedMedia.shortWAV), library: TestLibrary.shared,
                    configuration: configuration)
                let otherMedia = Box<VLCMedia>(makeMedia(SharedMedia.shortWAV))
                let otherPlayer = Box<VLCMediaPlayer>(
                    VLCMediaPlayer(
                        media: makeMedia(SharedMedia.shortWAV),
                        library: TestLibrary.shared))
                let weakMedia = WeakBox(otherMedia.current!)
                let weakPlayer = WeakBox(otherPlayer.current!)
                let fired = Counter()
                let token = player.observe(.endReached) { _ in
                    guard fired.increment() == 1 else { return }
                    otherMedia.clear()
                    otherPlayer.clear()
                    let start = DispatchTime.now()
                    let ok = VLCLibrary.waitForPendingTeardowns(timeout: 5)
                    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
                    results.record((ok, seconds, weakMedia.value == nil, weakPlayer.value == nil))
                }
                player.play()
                XCTAssertTrue(results.wait(forCount: 1, timeout: 30), "\(mode): no EndReached")
                token.cancel()
                player.stop()
            }
            let result = results.values.first
            print("waitForPendingTeardowns in EndReached, \(mode): \(result.map { "\($0)" } ?? "none")")
            XCTAssertEqual(result?.ok, true, "\(mode): returned false")
            XCTAssertLessThan(result?.seconds ?? 99, 4, "\(mode): waited for the delivering player's lease")
            XCTAssertEqual(result?.mediaGone, true, "\(mode): dropped media still alive after the wait")
            XCTAssertEqual(result?.playerGone, true, "\(mode): dropped player still alive after the wait")
        }
    }

    // MARK: 6. FIFO on an async queue

    /// Event then `Q.async`: the delivery runs first, always (also while a drain lingers).
    /// `Q.async` then event: not guaranteed while a drain runs or lingers (measured and
    /// printed); guaranteed once the queue is idle (checked).
    func testAsyncDelivery_whenEventAndQueueBlockAreInterleaved_keepsTheGuaranteedOrder() {
        let q = MarkedQueue(label: "cases.fifo")
        let iterations = 10_000
        let media = makeMedia(
            SharedMedia.shortWAV, configuration: EventsQueueConfiguration(queue: q.queue, isAsync: true))
        let delivered = Counter()
        let token = media.observe(.metaChanged) { _ in delivered.increment() }
        let eventFirstViolations = Counter()
        let burstViolations = Counter()
        let lingerOvertakes = Counter()
        let idleViolations = Counter()
        runWithDeadline(120, "FIFO on an async queue") {
            // (a) event, then block: the block must see the event delivered.
            for i in 0..<iterations {
                media.setMetaOnCallingThread(.title, i & 1 == 0 ? "a0" : "a1")
                let expected = i + 1
                q.queue.async { if delivered.count < expected { eventFirstViolations.increment() } }
            }
            q.queue.sync {}
            XCTAssertTrue(waitUntil(10) { delivered.count == iterations })
            // (a) again in short bursts (well under the 1 ms drain slice), idle in between.
            var base = delivered.count
            for i in 0..<iterations {
                if i % 20 == 0 { q.queue.sync {} }
                media.setMetaOnCallingThread(.title, i & 1 == 0 ? "s0" : "s1")
                let expected = base + i + 1
                q.queue.async { if delivered.count < expected { burstViolations.increment() } }
            }
            q.queue.sync {}
            XCTAssertTrue(waitUntil(10) { delivered.count == base + iterations })
            // (b) block, then event, back to back: a lingering drain may run the event first.
            base = delivered.count
            for i in 0..<iterations {
                let before = base + i
                q.queue.async { if delivered.count > before { lingerOvertakes.increment() } }
                media.setMetaOnCallingThread(.title, i & 1 == 0 ? "b0" : "b1")
            }
            q.queue.sync {}
            XCTAssertTrue(waitUntil(10) { delivered.count == base + iterations })
            // (b) on an idle queue: every delivery done and its drain returned, then > 1 ms.
            base = delivered.count
            for i in 0..<iterations {
                let before = base + i
                q.queue.sync {}
                usleep(1100)
                q.queue.async { if delivered.count > before { idleViolations.increment() } }
                media.setMetaOnCallingThread(.title, i & 1 == 0 ? "c0" : "c1")
                _ = waitUntil(5, poll: 0.0001) { delivered.count == before + 1 }
            }
            q.queue.sync {}
        }
        print(
            "FIFO: event-then-block violations \(eventFirstViolations.count)/\(iterations) back to back, "
                + "\(burstViolations.count)/\(iterations) in bursts of 20; "
                + "block-then-event overtaken while draining (not guaranteed) \(lingerOvertakes.count)/\(iterations); "
                + "on an idle queue \(idleViolations.count)/\(iterations)")
        XCTAssertEqual(eventFirstViolations.count, 0, "a block queued after an event ran before its delivery")
        XCTAssertEqual(
            burstViolations.count, 0, "in short bursts a block queued after an event ran before its delivery")
        XCTAssertEqual(idleViolations.count, 0, "on an idle queue an event overtook a block queued before it")
        XCTAssertEqual(delivered.count, 4 * iterations)
        token.cancel()
    }

    // MARK: 7. Threads of completions, .freed and payload teardown

    /// A media dropped from its player's EndReached handler: `.freed` and the completion run
    /// on the release queue, never on libvlc's thread; the same for the completion of a
    /// subscription on a `.mediaChanged` payload wrapper.
    func testCompletionAndFreed_whenMediaIsDroppedFromEndReachedHandler_runOnReleaseQueue() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make(label: "cases.freed")
            typealias Seen = (thread: UInt, onRelease: Bool)
            let endThread = Locked<UInt>(0)
            let freed = Recorder<Seen>(), completed = Recorder<Seen>()
            let payloadFreed = Recorder<Seen>(), payloadCompleted = Recorder<Seen>()
            let tokens = Recorder<EventSubscription>()
            let playerGone = Locked<WeakBox<VLCMediaPlayer>?>(nil)
            runWithDeadline(40, "\(mode): media dropped in EndReached") {
                let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
                let weakPlayer = WeakBox(player)
                playerGone.withLock { $0 = weakPlayer }
                let see: @Sendable () -> Seen = { (currentThreadID(), ServiceQueues.isOnReleaseQueue) }
                tokens.record(
                    player.observe(.mediaChanged) { event in
                        guard case .mediaChanged(let payload?) = event else { return }
                        tokens.record(
                            payload.observe(.freed, onCompletion: { payloadCompleted.record(see()) }) { _ in
                                payloadFreed.record(see())
                            })
                    })
                tokens.record(
                    player.observe(.endReached) { _ in
                        endThread.withLock { $0 = currentThreadID() }
                        weakPlayer.value?.media = nil
                    })
                do {
                    let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
                    tokens.record(
                        media.observe(.freed, onCompletion: { completed.record(see()) }) { _ in
                            freed.record(see())
                        })
                    player.media = media
                }
                player.play()
                XCTAssertTrue(completed.wait(forCount: 1, timeout: 30), "\(mode): the media's completion never ran")
                player.stop()
            }
            // The payload wrapper may be kept by the player until it goes.
            XCTAssertTrue(waitUntil(20) { playerGone.withLock { $0?.value == nil } }, "\(mode): player not freed")
            XCTAssertTrue(payloadCompleted.wait(forCount: 1, timeout: 20), "\(mode): payload completion never ran")
            XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 10))
            let end = endThread.withLock { $0 }
            XCTAssertNotEqual(end, 0, "\(mode): no EndReached")
            XCTAssertEqual(freed.count, 1, "\(mode): .freed")
            XCTAssertEqual(completed.count, 1, "\(mode): completion")
            XCTAssertEqual(payloadFreed.count, payloadCompleted.count, "\(mode): payload .freed vs completion")
            for (what, seen) in [
                ("freed", freed), ("completion", completed),
                ("payload freed", payloadFreed), ("payload completion", payloadCompleted),
            ] {
                for entry in seen.values {
                    XCTAssertTrue(entry.onRelease, "\(mode): \(what) not on the release queue")
                    // In inline and sync modes EndReached runs on libvlc's input thread (a
                    // dispatch worker in async mode may later serve the release queue too).
                    if mode != .queueAsync {
                        XCTAssertNotEqual(entry.thread, end, "\(mode): \(what) ran on libvlc's thread")
                    }
                }
            }
            tokens.removeAll().forEach { $0.cancel() }
        }
    }

    // MARK: 8. stopParsing from parse events

    private func playlist(_ name: String, entries: Int = 4) throws -> URL {
        let items = try (0..<entries).map { _ in try TestMedia.wav(seconds: 0.2) }
        return try TestMedia.m3u(entries: items, name: name)
    }

    /// `stopParsing` from MetaChanged or SubItemAdded during a playlist parse (inline and
    /// sync queue) used to call `parse_stop` on the preparser's thread, which waits for its own
    /// task. It must not hang, a ParsedChanged must arrive, and the preparser must still work.
    func testStopParsing_whenCalledFromParseEventHandlers_parseEndsAndPreparserStillWorks() throws {
        for mode in [DispatchMode.inline, .queueSync] {
            for trigger in [MediaEvent.Kind.metaChanged, .subItemAdded] {
                let (configuration, _) = mode.make(label: "cases.stopparse")
                let url = try playlist("stop-\(mode)-\(trigger).m3u")
                let second = try TestMedia.wav(seconds: 0.2)
                let stops = Counter()
                let parsed = Recorder<ParsedStatus>()
                let secondParsed = Recorder<ParsedStatus>()
                runWithDeadline(40, "\(mode): stopParsing from \(trigger)") {
                    let media = makeMedia(url, configuration: configuration)
                    let weakMedia = WeakBox(media)
                    let token = media.observe { event in
                        if event.kind == trigger, stops.increment() == 1 { weakMedia.value?.stopParsing() }
                        if case .parsedChanged(let status) = event, status != .none { parsed.record(status) }
                    }
                    do { try media.startParsing() } catch { XCTFail("startParsing: \(error)") }
                    XCTAssertTrue(parsed.wait(forCount: 1, timeout: 15), "\(mode)/\(trigger): no ParsedChanged")
                    let next = makeMedia(second)
                    let nextToken = next.observe(.parsedChanged) { event in
                        if case .parsedChanged(let status) = event, status != .none { secondParsed.record(status) }
                    }
                    do { try next.startParsing() } catch { XCTFail("startParsing: \(error)") }
                    XCTAssertTrue(secondParsed.wait(forCount: 1, timeout: 15), "\(mode)/\(trigger): preparser wedged")
                    token.cancel()
                    nextToken.cancel()
                    withExtendedLifetime(media) {}
                }
                XCTAssertGreaterThanOrEqual(stops.count, 1, "\(mode)/\(trigger): the trigger never came")
                XCTAssertEqual(secondParsed.values.first, .done, "\(mode)/\(trigger): second parse")
                print(
                    "stopParsing from \(trigger), \(mode): first parse \(parsed.values), second \(secondParsed.values)")
            }
        }
    }

    // MARK: 9. subItems from the sub-item list's own handler

    /// Reading `subItems`/`subItemList` inside the sub-item list's ItemAdded (libvlc holds
    /// that list's lock) used to lock it again: hang. It must return the list with the new item.
    func testSubItems_whenReadFromSubItemListItemAddedHandler_includesTheNewItemWithoutHang() throws {
        let entries = 4
        for mode in [DispatchMode.inline, .queueSync] {
            let (configuration, _) = mode.make(label: "cases.subitems")
            let url = try playlist("subitems-\(mode).m3u", entries: entries)
            let seen = Recorder<(contains: Bool, count: Int, sameList: Bool)>()
            let parsed = Recorder<ParsedStatus>()
            runWithDeadline(40, "\(mode): subItems in the sub-item list's itemAdded") {
                let media = makeMedia(url, configuration: configuration)
                let weakMedia = WeakBox(media)
                let list = media.subItemList
                let listID = ObjectIdentifier(list)
                let listToken = list.observe(.itemAdded) { event in
                    guard case .itemAdded(let added, _) = event, let media = weakMedia.value else { return }
                    let items = media.subItems
                    let again = media.subItemList
                    seen.record(
                        (
                            items.contains { $0.isSameMedia(as: added) }, items.count,
                            ObjectIdentifier(again) == listID
                        ))
                }
                let token = media.observe(.parsedChanged) { event in
                    if case .parsedChanged(let status) = event, status != .none { parsed.record(status) }
                }
                do { try media.startParsing() } catch { XCTFail("startParsing: \(error)") }
                XCTAssertTrue(parsed.wait(forCount: 1, timeout: 20), "\(mode): no ParsedChanged")
                XCTAssertTrue(seen.wait(forCount: entries, timeout: 10), "\(mode): \(seen.count) itemAdded")
                XCTAssertEqual(media.subItems.count, entries)
                listToken.cancel()
                token.cancel()
            }
            XCTAssertEqual(seen.values.map(\.contains), Array(repeating: true, count: entries), "\(mode)")
            XCTAssertEqual(seen.values.map(\.count), Array(1...entries), "\(mode)")
            XCTAssertTrue(seen.values.allSatisfy(\.sameList), "\(mode): a second sub-item list was made")
        }
    }

    // MARK: 10. Player getters from media handlers

    private struct Reading: Sendable {
        let event: MediaEvent
        let state: PlaybackState
        let isPlaying: Bool
        let hasMedia: Bool
    }

    /// `play` sends MetaChanged(NowPlaying) and `set_media` the old media's StateChanged with
    /// the player's lock held: player getters called there used to take it again and hang.
    /// Workaround: `PlaybackCache` (rule 1 of SendSites.md) — this test fails without it.
    func testPlayerGetters_whenReadFromMediaHandlersDuringPlayAndSetMedia_answerWithoutHang() {
        for mode in [DispatchMode.inline, .queueSync] {
            let (configuration, _) = mode.make(label: "cases.getters")
            let readings = Recorder<Reading>()
            runWithDeadline(40, "\(mode): player getters from media handlers") {
                let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
                let weakPlayer = WeakBox(player)
                let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
                let mediaToken = media.observe(.metaChanged, .stateChanged) { event in
                    if case .metaChanged(let key) = event, key != .nowPlaying { return }
                    guard let player = weakPlayer.value else { return }
                    readings.record(
                        Reading(
                            event: event, state: player.state, isPlaying: player.isPlaying,
                            hasMedia: player.media != nil))
                }
                let ended = EventLog<MediaPlayerEvent>()
                let playerToken = player.observe(.endReached) { ended.record($0) }
                player.media = media
                player.play()
                XCTAssertTrue(ended.wait(for: .endReached, timeout: 30), "\(mode): no EndReached")
                XCTAssertTrue(
                    readings.values.contains { if case .metaChanged = $0.event { true } else { false } },
                    "\(mode): no NowPlaying during play()")
                player.media = makeMedia(SharedMedia.shortWAV)
                XCTAssertTrue(
                    readings.wait(timeout: 20) { reading in
                        if case .stateChanged(.nothingSpecial) = reading.event { true } else { false }
                    },
                    "\(mode): no StateChanged(NothingSpecial) from set_media")
                player.stop()
                mediaToken.cancel()
                playerToken.cancel()
            }
            print("player getters, \(mode): \(readings.values.map { "\($0.event.name)->\($0.state)" })")
            for reading in readings.values {
                XCTAssertNotEqual(reading.state, .error, "\(mode): \(reading.event)")
                XCTAssertTrue(reading.hasMedia, "\(mode): no media during \(reading.event)")
            }
        }
    }

    /// The list player's getters from a media handler while it starts an item (it holds its
    /// locks and the player's while libvlc sends NowPlaying).
    func testListPlayerGetters_whenReadFromMediaHandlerWhileItemStarts_answerWithoutHang() {
        for mode in [DispatchMode.inline, .queueSync] {
            let (configuration, _) = mode.make(label: "cases.listgetters")
            let readings = Recorder<(state: PlaybackState, isPlaying: Bool)>()
            runWithDeadline(40, "\(mode): list player getters from media handlers") {
                let listPlayer = VLCMediaListPlayer(library: TestLibrary.shared, configuration: configuration)
                let weakListPlayer = WeakBox(listPlayer)
                let items = (0..<2).map { _ in makeMedia(SharedMedia.shortWAV, configuration: configuration) }
                let tokens = items.map { item in
                    item.observe(.metaChanged, .stateChanged) { event in
                        if case .metaChanged(let key) = event, key != .nowPlaying { return }
                        guard let listPlayer = weakListPlayer.value else { return }
                        readings.record((listPlayer.state, listPlayer.isPlaying))
                    }
                }
                let ended = Counter()
                let endToken = listPlayer.mediaPlayer.observe(.endReached) { _ in ended.increment() }
                listPlayer.mediaList = VLCMediaList(media: items, library: TestLibrary.shared)
                listPlayer.play()
                XCTAssertTrue(ended.wait(forAtLeast: 2, timeout: 30), "\(mode): \(ended.count) items ended")
                listPlayer.stop()
                tokens.forEach { $0.cancel() }
                endToken.cancel()
            }
            print("list player getters, \(mode): \(readings.values.map { "\($0.state)" })")
            XCTAssertGreaterThanOrEqual(readings.count, 2, "\(mode): media handlers never read the getters")
            for reading in readings.values {
                XCTAssertNotEqual(reading.state, .error, "\(mode)")
            }
        }
    }

    // MARK: 11. A second wrapper's sub-items, on the queue the sub-item list waits for

    /// libvlc's preparser adds each sub-item holding the sub-item list's lock and, while it
    /// holds it, waits for a synchronous queue to deliver the list's item events. The list was
    /// made by one wrapper of the media; a handler of another object on that queue reads the
    /// `subItems` of another wrapper of the same media (the one a `MediaChanged` carries, a
    /// list's item, the user's own), its first: making a second list wrapper took that lock
    /// again, and the queue and the preparser waited for each other. One wrapper per native
    /// list: the second wrapper reads the first's.
    /// Workaround: `SubItemListLock` (rule 8 of SendSites.md) — this test fails without it.
    func testSubItems_whenASecondWrapperReadsThemOnTheQueueTheSubItemListWaitsFor_answerWithoutHang() throws {
        let entries = 3
        let queue = MarkedQueue(label: "cases.second-wrapper")
        let mark = QueueIdentity.mark(queue.queue)
        let configuration = EventsQueueConfiguration(queue: queue.queue, isAsync: false)
        for round in 0..<3 {
            let url = try playlist("second-wrapper-\(round).m3u", entries: entries)
            let answers = Recorder<(waited: Bool, count: Int)>()
            let parsed = Recorder<ParsedStatus>()
            let finished = runWithDeadline(40, "round \(round): a second wrapper's subItems on the list's queue") {
                // The user's wrapper: its own events inline, so that only the sub-item list's
                // events go to the queue.
                let media = makeMedia(url, configuration: EventsDefaultConfiguration())
                let mediaToken = media.observe(.parsedChanged) { event in
                    if case .parsedChanged(let status) = event, status != .none { parsed.record(status) }
                }
                // Another wrapper of the same media makes the list, delivered on the queue.
                let listMaker = VLCMedia(retaining: media.native, configuration: configuration)
                let listToken = listMaker.subItemList.observe(.itemAdded) { _ in }
                // A handler of another object runs on the queue when the preparser starts
                // waiting for it, holding the sub-item list's lock.
                let other = VLCMediaList(library: TestLibrary.shared, configuration: configuration)
                let running = DispatchSemaphore(value: 0)
                let otherToken = other.observe(.itemAdded) { _ in
                    running.signal()
                    let waited = waitUntil(20) { mark.syncWaiters.load(ordering: .acquiring) > 0 }
                    answers.record((waited, media.subItems.count))
                }
                other.append(makeMedia(SharedMedia.shortWAV))
                XCTAssertEqual(running.wait(timeout: .now() + 20), .success, "round \(round): no itemAdded")
                do { try media.startParsing() } catch { XCTFail("startParsing: \(error)") }
                XCTAssertTrue(parsed.wait(forCount: 1, timeout: 30), "round \(round): no ParsedChanged")
                XCTAssertEqual(media.subItems.count, entries, "round \(round)")
                XCTAssertTrue(media.subItemList === listMaker.subItemList, "round \(round): two sub-item lists")
                otherToken.cancel()
                listToken.cancel()
                mediaToken.cancel()
            }
            // A deadlocked round leaves its threads stuck: no later round can tell anything.
            guard finished else { return }
            XCTAssertEqual(
                answers.values.map(\.waited), [true], "round \(round): the preparser never waited for the queue")
        }
    }

    // MARK: 12. waitForPendingTeardowns after dropping another wrapper of the sender

    /// A media handler (inline, or on a synchronous queue while libvlc's thread waits) drops
    /// a second, subscribed wrapper of that same media, then waits for teardowns. The second
    /// wrapper's teardown detaches from the media's event manager, whose lock the sending
    /// thread holds until the handler returns: queued at once, it held up the teardown queue
    /// and the wait ran out its whole timeout. It is queued once the handler has returned, and
    /// the wait leaves it out, as it leaves out the objects being delivered.
    /// Workaround: `TeardownAfterSenderHandler` (rule 5 of SendSites.md) — this test fails without it.
    func testWaitForPendingTeardowns_whenASubscribedSecondWrapperOfTheSenderIsDroppedInItsHandler_returnsAtOnce() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make(label: "cases.second-wrapper-teardown")
            let results = Recorder<(ok: Bool, seconds: Double, otherGone: Bool)>()
            let secondFreed = Counter()
            runWithDeadline(40, "\(mode): waitForPendingTeardowns after dropping a second wrapper") {
                let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
                let second = Box<VLCMedia>(VLCMedia(retaining: media.native, configuration: configuration))
                // Subscribed: its listener is attached to the same event manager.
                let secondToken = second.current!.observe(.metaChanged, onCompletion: { secondFreed.increment() }) {
                    _ in
                }
                let other = Box<VLCMedia>(makeMedia(SharedMedia.shortWAV))
                let weakOther = WeakBox(other.current!)
                let fired = Counter()
                let token = media.observe(.metaChanged) { _ in
                    guard fired.increment() == 1 else { return }
                    second.clear()
                    other.clear()
                    let start = DispatchTime.now()
                    let ok = VLCLibrary.waitForPendingTeardowns(timeout: 5)
                    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
                    results.record((ok, seconds, weakOther.value == nil))
                }
                // libvlc sends MetaChanged from inside this call, on this thread.
                media.setMetaOnCallingThread(.title, "drop the second wrapper")
                XCTAssertTrue(results.wait(forCount: 1, timeout: 15), "\(mode): no MetaChanged")
                token.cancel()
                // The token is kept until the completion is seen: cancelling it first (as its
                // release would) means no completion, and on an asynchronous route the second
                // wrapper's queued delivery may keep it for a moment after the handler.
                withExtendedLifetime(secondToken) {
                    XCTAssertTrue(
                        secondFreed.wait(forAtLeast: 1, timeout: 15), "\(mode): the second wrapper was never torn down")
                }
            }
            XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 20), "\(mode)")
            let result = results.values.first
            XCTAssertEqual(result?.ok, true, "\(mode): returned false after \(result?.seconds ?? -1) s")
            XCTAssertLessThan(result?.seconds ?? 99, 4, "\(mode): waited for the second wrapper's detach")
            XCTAssertEqual(result?.otherGone, true, "\(mode): another dropped media was not torn down meanwhile")
        }
    }

    /// The teardown a handler defers for the second wrapper it dropped is pending from the
    /// drop on, for a wait on any other thread: before, it counted only once the handler had
    /// returned, and a program waiting meanwhile could exit first.
    func testWaitForPendingTeardowns_onAnotherThread_whileAHandlerDefersASecondWrappersTeardown_findsItPending() {
        for mode in [DispatchMode.inline, .queueSync] {
            let (configuration, _) = mode.make(label: "cases.deferred-teardown")
            let secondFreed = Counter()
            let dropped = DispatchSemaphore(value: 0)
            let resume = DispatchSemaphore(value: 0)
            let sent = DispatchSemaphore(value: 0)
            let delivering = Box<[UInt]>(nil)
            runWithDeadline(40, "\(mode): a teardown deferred by a handler") {
                // Subscribed first: its handler runs before the second wrapper's listener.
                let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
                let fired = Counter()
                let second = Box<VLCMedia>(VLCMedia(retaining: media.native, configuration: configuration))
                let token = media.observe(.metaChanged) { _ in
                    guard fired.increment() == 1 else { return }
                    delivering.set(DeliveryContext.deliveringHandlers)
                    second.clear()
                    dropped.signal()
                    _ = resume.wait(timeout: .now() + 20)
                }
                let secondToken = second.current!.observe(.metaChanged, onCompletion: { secondFreed.increment() }) {
                    _ in
                }
                XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 10), "\(mode): not idle before the event")
                DispatchQueue.global().async {
                    // libvlc sends MetaChanged from inside this call, on this thread.
                    media.setMetaOnCallingThread(.title, "drop the second wrapper")
                    sent.signal()
                }
                XCTAssertEqual(dropped.wait(timeout: .now() + 15), .success, "\(mode): no MetaChanged")
                // Everything but the sending handler's own lease: the deferred teardown.
                let idle = ServiceQueues.pendingTeardowns.waitForIdle(
                    excluding: delivering.current ?? [], ignoringParses: true, until: .now() + 0.3)
                XCTAssertFalse(
                    idle, "\(mode): the deferred teardown was not pending (\(ServiceQueues.pendingTeardowns.pending))")
                resume.signal()
                XCTAssertEqual(sent.wait(timeout: .now() + 15), .success, "\(mode): setMeta did not return")
                token.cancel()
                withExtendedLifetime(secondToken) {
                    XCTAssertTrue(
                        secondFreed.wait(forAtLeast: 1, timeout: 15), "\(mode): the second wrapper was never torn down")
                }
            }
            XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 20), "\(mode)")
        }
    }

    /// The same for a `FailureCauseRecorder`, whose listeners are on its player's event
    /// manager, dropped in a handler of that player (`MediaChanged`, sent from inside the
    /// queued `set_media` with the player's event lock held).
    func testWaitForPendingTeardowns_whenAFailureCauseRecorderIsDroppedInItsPlayersHandler_returnsAtOnce() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make(label: "cases.recorder-teardown")
            let results = Recorder<(ok: Bool, seconds: Double)>()
            runWithDeadline(40, "\(mode): waitForPendingTeardowns after dropping a recorder") {
                let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
                let recorder = Box<FailureCauseRecorder>(FailureCauseRecorder(player: player))
                let fired = Counter()
                let token = player.observe(.mediaChanged) { _ in
                    guard fired.increment() == 1 else { return }
                    recorder.clear()
                    let start = DispatchTime.now()
                    let ok = VLCLibrary.waitForPendingTeardowns(timeout: 5)
                    results.record((ok, Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9))
                }
                player.media = makeMedia(SharedMedia.shortWAV)
                XCTAssertTrue(results.wait(forCount: 1, timeout: 30), "\(mode): no MediaChanged")
                token.cancel()
            }
            let result = results.values.first
            XCTAssertEqual(result?.ok, true, "\(mode): returned false after \(result?.seconds ?? -1) s")
            XCTAssertLessThan(result?.seconds ?? 99, 4, "\(mode): waited for the recorder's detach")
        }
    }

    // MARK: 13. setMeta from a queue that the delivery queue targets

    /// The media's events are delivered synchronously on `top`, which targets `base`. A block
    /// of `base` runs while a thread that set the title holds the media's event lock and waits
    /// for `top` (which cannot run before that block ends); the block sets the artist. Called
    /// directly, that set waited for the event lock: deadlock (libdispatch does not tell that
    /// `top` targets `base`, so the block could not be recognized). `setMeta` is now always
    /// queued on the media's control queue, and `meta(_:)` answers the new value at once.
    /// Workaround: `SetMetaQueue` (rule 5 of SendSites.md) — this test fails without it.
    func testSetMeta_whenCalledFromABlockOfTheQueueTheDeliveryQueueTargets_neitherWaitsNorLosesTheValue() {
        let base = DispatchQueue(label: "cases.setmeta.base")
        let top = DispatchQueue(label: "cases.setmeta.top", target: base)
        let mark = QueueIdentity.mark(top)
        let media = makeMedia(SharedMedia.shortWAV, configuration: EventsQueueConfiguration(queue: top, isAsync: false))
        let keys = Recorder<MetaKey>()
        let token = media.observe(.metaChanged) { event in
            if case .metaChanged(let key) = event { keys.record(key) }
        }
        let waited = Locked(false)
        let finished = runWithDeadline(30, "setMeta from a block of the targeted queue") {
            let running = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            base.async {
                running.signal()
                waited.withLock { $0 = waitUntil(10) { mark.syncWaiters.load(ordering: .acquiring) > 0 } }
                media.setMeta(.artist, "from base")
                XCTAssertEqual(media.meta(.artist), "from base")
                done.signal()
            }
            running.wait()
            media.setMeta(.title, "from a thread")
            XCTAssertEqual(media.meta(.title), "from a thread")
            done.wait()
        }
        XCTAssertTrue(finished)
        XCTAssertTrue(waited.withLock { $0 }, "no delivery waited for the queue while the block ran")
        XCTAssertTrue(keys.wait(timeout: 10) { $0 == .artist }, "\(keys.values)")
        XCTAssertEqual(keys.values.filter { $0 == .title || $0 == .artist }, [.title, .artist])
        XCTAssertEqual(media.meta(.artist), "from base")
        XCTAssertEqual(media.meta(.title), "from a thread")
        token.cancel()
    }

    // MARK: 14. Making players in a handler while a snapshot is being taken

    /// While one player takes a snapshot, libvlc's `snapshot-file` callback sends
    /// `SnapshotTaken` to every player of the library in turn, taking each one's event lock;
    /// `libvlc_media_player_new` (also inside `libvlc_media_list_player_new`) waits for that
    /// callback. A handler of another player holds that player's event lock: making a player
    /// there deadlocked (the callback waits for the handler, the handler for the callback). Here
    /// a bystander's `SnapshotTaken` tells the handler that the callback runs; the handler then
    /// makes a player and a list player. Their native objects are made on their control queues
    /// once the handler has returned, and they work.
    /// Workaround: `DeferredFromHandlers` (rule 13 of SendSites.md) — this test fails without it.
    func testPlayerInit_whenCalledInAHandlerWhileASnapshotIsBeingTaken_returnsAndThePlayerWorks() async throws {
        for mode in [DispatchMode.inline, .queueSync] {
            let (configuration, _) = mode.make(label: "cases.snapshot-players")
            let library = try VLCLibrary()
            let directory = try TestMedia.directory(name: "snapshot-players-\(mode)")
            // Made in this order: the callback visits the bystander before the holder. The
            // bystander's handler runs off the holder's queue (inline: from the queue its
            // SnapshotTaken takes), so that it can tell while the holder's handler waits.
            let bystander = VLCMediaPlayer(library: library, configuration: EventsDefaultConfiguration())
            let holder = VLCMediaPlayer(library: library, configuration: configuration)
            // The shooter delivers inline: on the holder's queue its input thread would wait
            // behind the holder's handler, so the video would stop before it showed a picture
            // and libvlc, which waits 500 ms for one, would write nothing (seen under load).
            let shooter = VLCMediaPlayer(library: library, configuration: EventsDefaultConfiguration())
            let callbackRuns = DispatchSemaphore(value: 0)
            let bystanderToken = bystander.observe(.snapshotTaken) { _ in callbackRuns.signal() }
            let inHandler = DispatchSemaphore(value: 0)
            let made = Locked<(VLCMediaPlayer, VLCMediaListPlayer)?>(nil)
            let sawCallback = Locked(false)
            let fired = Counter()
            let holderToken = holder.observe(.mediaChanged) { _ in
                guard fired.increment() == 1 else { return }
                inHandler.signal()
                sawCallback.withLock { $0 = callbackRuns.wait(timeout: .now() + 15) == .success }
                let player = VLCMediaPlayer(library: library, configuration: configuration)
                let listPlayer = VLCMediaListPlayer(library: library, configuration: configuration)
                made.withLock { $0 = (player, listPlayer) }
            }
            let shots = EventLog<MediaPlayerEvent>()
            let shooterToken = shooter.observe { shots.record($0) }
            shooter.media = VLCMedia(path: SharedMedia.movie.path, library: library)
            shooter.play()
            XCTAssertTrue(
                shots.entries.wait(timeout: 20) { $0.event.same(as: .voutChanged(count: 1)) }, "\(mode): \(shots.names)"
            )
            holder.media = VLCMedia(path: SharedMedia.shortWAV.path, library: library)
            XCTAssertEqual(inHandler.wait(timeout: .now() + 20), .success, "\(mode): no MediaChanged")
            let path = try await withTimeout(20) {
                try await shooter.takeSnapshot(to: directory.appendingPathComponent("shot.png").path)
            }
            XCTAssertTrue(path.hasSuffix("shot.png"), "\(mode): \(path)")
            XCTAssertTrue(sawCallback.withLock { $0 }, "\(mode): the handler did not run while the callback ran")
            let (player, listPlayer) = try XCTUnwrap(made.withLock { $0 }, "\(mode): the handler made nothing")
            // Both work once made: the player plays to its end, the list player plays a list.
            player.media = VLCMedia(path: SharedMedia.shortWAV.path, library: library)
            let end = try await withTimeout(20) { try await player.playToEnd(timeout: .seconds(15)) }
            XCTAssertEqual(end.kind, .endReached, "\(mode)")
            let played = Recorder<MediaListPlayerEvent.Kind>()
            let listToken = listPlayer.observe(.played) { played.record($0.kind) }
            listPlayer.mediaList = VLCMediaList(
                media: [VLCMedia(path: SharedMedia.shortWAV.path, library: library)], library: library)
            listPlayer.play()
            XCTAssertTrue(played.wait(forCount: 1, timeout: 20), "\(mode): the list player played nothing")
            try await withTimeout(20) { await shooter.stopAndWait() }
            listToken.cancel()
            shooterToken.cancel()
            holderToken.cancel()
            bystanderToken.cancel()
        }
    }
}
