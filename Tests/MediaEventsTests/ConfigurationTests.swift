import Dispatch
import Foundation
@_spi(Benchmarks) @testable import MediaEvents
import XCTest

/// Where each configuration runs handlers, and how the shared configuration is read.
final class ConfigurationTests: XCTestCase {
    override func tearDown() {
        VLCLibrary.sharedEventsConfiguration = EventsDefaultConfiguration()
        super.tearDown()
    }

    /// libvlc sends MediaMetaChanged from inside `libvlc_media_set_meta`, on the caller's thread.
    func testDefault_whenLibVLCSendsInline_runsOnTheCallersThreadBeforeReturning() {
        let log = EventLog<MediaEvent>()
        runWithDeadline(20, "setMeta") {
            let media = makeMedia(SharedMedia.shortWAV, configuration: EventsDefaultConfiguration())
            let token = media.observe(.metaChanged) { log.record($0) }
            let caller = currentThreadID()
            media.setMetaOnCallingThread(.title, "one")
            XCTAssertEqual(log.entries.count, 1, "not delivered before setMeta returned")
            XCTAssertEqual(log.entries.values.first?.thread, caller)
            token.cancel()
        }
    }

    /// Player events come from libvlc's input thread: the default configuration runs the
    /// handler right there (not on the caller's thread, not on main, not on a queue of ours).
    func testDefault_whenPlaying_runsOnLibVLCsThread() {
        let log = EventLog<MediaPlayerEvent>()
        let offLibVLC = Counter()
        let testThread = currentThreadID()
        runWithDeadline(30, "play") {
            let player = VLCMediaPlayer(
                media: makeMedia(SharedMedia.shortWAV), library: TestLibrary.shared,
                configuration: EventsDefaultConfiguration())
            let token = player.observe(.playing, .endReached) { event in
                if Thread.isMainThread || ServiceQueues.isOnReleaseQueue { offLibVLC.increment() }
                log.record(event)
            }
            player.play()
            XCTAssertTrue(log.wait(for: .endReached), "\(log.names)")
            token.cancel()
        }
        XCTAssertEqual(offLibVLC.count, 0)
        XCTAssertFalse(log.entries.values.contains { $0.thread == testThread })
    }

    func testQueueSync_whenEventsArrive_runOnTheQueueBeforeLibVLCContinues() {
        let marked = MarkedQueue(label: "test.config.sync")
        let log = EventLog<MediaEvent>()
        let offQueue = Counter()
        runWithDeadline(20, "setMeta") {
            let media = makeMedia(
                SharedMedia.shortWAV,
                configuration: EventsQueueConfiguration(queue: marked.queue, isAsync: false))
            let token = media.observe(.metaChanged) { event in
                if !marked.isCurrent { offQueue.increment() }
                log.record(event)
            }
            for index in 0..<10 {
                media.setMetaOnCallingThread(.title, "\(index)")
                XCTAssertEqual(log.entries.count, index + 1, "sync delivery had not run when setMeta returned")
            }
            token.cancel()
        }
        XCTAssertEqual(offQueue.count, 0)
    }

    func testQueueAsync_whenEventsArrive_runOnTheQueueInOrderWithoutBlockingLibVLC() {
        let marked = MarkedQueue(label: "test.config.async")
        let log = EventLog<MediaEvent>()
        let offQueue = Counter()
        let gate = DispatchSemaphore(value: 0)
        runWithDeadline(20, "setMeta while the queue is blocked") {
            let media = makeMedia(
                SharedMedia.shortWAV,
                configuration: EventsQueueConfiguration(queue: marked.queue, isAsync: true))
            let token = media.observe(.metaChanged) { event in
                if !marked.isCurrent { offQueue.increment() }
                log.record(event)
            }
            marked.queue.async { gate.wait() }
            for index in MetaKey.orderedSample.indices {
                media.setMetaOnCallingThread(MetaKey.orderedSample[index], "x")  // would hang here if it were sync
            }
            XCTAssertEqual(log.entries.count, 0, "delivered while the queue was blocked")
            gate.signal()
            XCTAssertTrue(log.entries.wait(forCount: MetaKey.orderedSample.count, timeout: 15))
            token.cancel()
        }
        let keys = log.events.compactMap { if case .metaChanged(let key) = $0 { key } else { nil } }
        XCTAssertEqual(keys, MetaKey.orderedSample)
        XCTAssertEqual(offQueue.count, 0)
    }

    /// Legacy targets main, asynchronously: nothing arrives until the test drains main.
    func testLegacy_whenMainIsDrained_deliversOnMain() {
        XCTAssertTrue(Thread.isMainThread, "XCTest runs tests on the main thread")
        let log = EventLog<MediaEvent>()
        let offMain = Counter()
        let media = makeMedia(SharedMedia.shortWAV, configuration: EventsLegacyConfiguration())
        let token = media.observe(.metaChanged) { event in
            if !Thread.isMainThread { offMain.increment() }
            log.record(event)
        }
        media.setMetaOnCallingThread(.title, "legacy")
        XCTAssertEqual(log.entries.count, 0, "legacy delivered synchronously")
        let deadline = Date().addingTimeInterval(15)
        while log.entries.count == 0 && Date() < deadline {
            RunLoop.main.run(until: Date().addingTimeInterval(0.01))
        }
        XCTAssertEqual(log.entries.count, 1)
        XCTAssertEqual(offMain.count, 0)
        token.cancel()
    }

    func testSharedConfiguration_whenHammeredFromThreads_staysConsistent() {
        let queueA = DispatchQueue(label: "test.shared.a")
        let bad = Counter()
        startThreads(count: 8, name: "shared-config") { index in
            for round in 0..<2_000 {
                if (index + round) % 2 == 0 {
                    VLCLibrary.sharedEventsConfiguration =
                        round % 3 == 0
                        ? EventsQueueConfiguration(queue: queueA, isAsync: true) : EventsDefaultConfiguration()
                } else {
                    let configuration = VLCLibrary.sharedEventsConfiguration
                    // Every value ever stored is one of these two: a torn read would show otherwise.
                    let valid =
                        (configuration.dispatchQueue == nil && !configuration.isAsync)
                        || (configuration.dispatchQueue === queueA && configuration.isAsync)
                    if !valid { bad.increment() }
                }
            }
        }
        XCTAssertEqual(bad.count, 0)
        VLCLibrary.sharedEventsConfiguration = EventsLegacyConfiguration()
        XCTAssertTrue(VLCLibrary.sharedEventsConfiguration is EventsLegacyConfiguration)
    }

    func testSharedConfiguration_whenChangedAfterCreation_objectKeepsTheOneReadAtCreation() {
        let first = MarkedQueue(label: "test.shared.first")
        VLCLibrary.sharedEventsConfiguration = EventsQueueConfiguration(queue: first.queue, isAsync: false)
        let media = makeMedia(SharedMedia.shortWAV)
        let player = VLCMediaPlayer(library: TestLibrary.shared)
        VLCLibrary.sharedEventsConfiguration = EventsDefaultConfiguration()
        XCTAssertTrue(media.configuration.dispatchQueue === first.queue)
        XCTAssertTrue(player.configuration.dispatchQueue === first.queue)
        let onFirst = Recorder<Bool>()
        runWithDeadline(20, "setMeta") {
            let token = media.observe(.metaChanged) { _ in onFirst.record(first.isCurrent) }
            media.setMetaOnCallingThread(.title, "x")
            token.cancel()
        }
        XCTAssertEqual(onFirst.values, [true])
        let later = makeMedia(SharedMedia.shortWAV)
        XCTAssertNil(later.configuration.dispatchQueue, "a new object must read the new shared value")
    }

    func testPerObjectConfiguration_whenGiven_winsOverShared() {
        let shared = MarkedQueue(label: "test.shared.global")
        let own = MarkedQueue(label: "test.shared.own")
        VLCLibrary.sharedEventsConfiguration = EventsQueueConfiguration(queue: shared.queue, isAsync: false)
        let media = makeMedia(
            SharedMedia.shortWAV, configuration: EventsQueueConfiguration(queue: own.queue, isAsync: false))
        let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: EventsDefaultConfiguration())
        XCTAssertNil(player.configuration.dispatchQueue)
        let where_ = Recorder<String>()
        runWithDeadline(20, "setMeta") {
            let token = media.observe(.metaChanged) { _ in
                where_.record(own.isCurrent ? "own" : shared.isCurrent ? "shared" : "elsewhere")
            }
            media.setMetaOnCallingThread(.title, "x")
            token.cancel()
        }
        XCTAssertEqual(where_.values, ["own"])
    }
}

extension MetaKey {
    /// A few distinct keys, so an async test can check the order they arrive in.
    static let orderedSample: [MetaKey] = (0..<12).map { MetaKey(rawValue: UInt32($0)) }
}
