import Foundation
@_spi(Benchmarks) @testable import MediaEvents
import XCTest

/// `observe` / `EventSubscription`: cancellation, completion, lifetimes. MediaMetaChanged is
/// sent synchronously from inside `setMeta`, so these tests drive real libvlc events from
/// their own threads.
final class SubscriptionTests: XCTestCase {
    func testCancel_whenCalledTwice_isIdempotentAndStopsDeliveries() {
        let media = makeMedia(SharedMedia.shortWAV)
        let seen = Counter()
        let token = media.observe(.metaChanged) { _ in seen.increment() }
        media.setMetaOnCallingThread(.title, "a")
        XCTAssertEqual(seen.count, 1)
        XCTAssertTrue(token.isActive)
        token.cancel()
        token.cancel()
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(media.eventHub.sinkCount, 0)
        media.setMetaOnCallingThread(.title, "b")
        XCTAssertEqual(seen.count, 1)
    }

    func testCancel_whenCalledFromManyThreadsAtOnce_removesExactlyOnce() {
        for _ in 0..<50 {
            let media = makeMedia(SharedMedia.shortWAV)
            let other = media.observe(.metaChanged) { _ in }
            let token = media.observe(.metaChanged) { _ in }
            XCTAssertEqual(media.eventHub.sinkCount, 2)
            startThreads(count: 8, name: "cancel") { _ in token.cancel() }
            XCTAssertEqual(media.eventHub.sinkCount, 1)
            XCTAssertTrue(other.isActive)
            other.cancel()
        }
    }

    func testDeinit_whenTokenDropped_cancels() {
        let media = makeMedia(SharedMedia.shortWAV)
        let seen = Counter()
        let completions = Counter()
        var token: EventSubscription? = media.observe(.metaChanged, onCompletion: { completions.increment() }) { _ in
            seen.increment()
        }
        media.setMetaOnCallingThread(.title, "a")
        XCTAssertNotNil(token)
        token = nil
        media.setMetaOnCallingThread(.title, "b")
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(media.eventHub.sinkCount, 0)
        XCTAssertEqual(completions.count, 0, "a cancelled subscription must not complete")
    }

    func testCancel_whenCalledInsideTheHandler_stopsFurtherDeliveries() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
            let seen = Counter()
            let tokenBox = Box<EventSubscription>(nil)
            tokenBox.set(
                media.observe(.metaChanged) { _ in
                    seen.increment()
                    tokenBox.current?.cancel()
                })
            runWithDeadline(20, "\(mode): cancel inside the handler") {
                for _ in 0..<5 { media.setMetaOnCallingThread(.title, "x") }
                if let queue = configuration.dispatchQueue { queue.sync {} }
            }
            XCTAssertEqual(seen.count, 1, "\(mode)")
            XCTAssertEqual(tokenBox.current?.isActive, false)
        }
    }

    func testCompletion_whenSourceTornDown_runsExactlyOnce() {
        let completions = Counter()
        var media: VLCMedia? = makeMedia(SharedMedia.shortWAV)
        let tokens = (0..<10).map { _ in media!.observe(onCompletion: { completions.increment() }) { _ in } }
        media = nil
        // Completions run on the release queue, just after the teardown.
        XCTAssertTrue(waitUntil(20) { completions.count == 10 }, "\(completions.count)")
        XCTAssertTrue(tokens.allSatisfy { !$0.isActive })
        tokens.forEach { $0.cancel() }  // cancel after completion: no second completion
        XCTAssertEqual(completions.count, 10)
    }

    func testCompletion_whenCancelledBeforeTeardown_neverRuns() {
        let completions = Counter()
        var media: VLCMedia? = makeMedia(SharedMedia.shortWAV)
        let token = media!.observe(onCompletion: { completions.increment() }) { _ in }
        token.cancel()
        media = nil
        XCTAssertEqual(completions.count, 0)
    }

    /// Cancel races teardown on two real threads: the completion runs at most once, and when
    /// it runs no event follows it.
    func testCompletion_whenCancelRacesTeardown_runsAtMostOnce() {
        var completedRounds = 0
        let rounds = 300
        for _ in 0..<rounds {
            let completions = Counter()
            let afterCompletion = Counter()
            let holder = Box<VLCMedia>(makeMedia(SharedMedia.shortWAV))
            let token = holder.current!.observe(onCompletion: { completions.increment() }) { _ in
                if completions.count > 0 { afterCompletion.increment() }
            }
            startThreads(count: 2, name: "cancel-vs-teardown") { index in
                if index == 0 { token.cancel() } else { holder.clear() }
            }
            XCTAssertLessThanOrEqual(completions.count, 1)
            XCTAssertEqual(afterCompletion.count, 0)
            XCTAssertFalse(token.isActive)
            completedRounds += completions.count
        }
        print("cancel vs teardown: completion won \(completedRounds) of \(rounds) rounds")
    }

    func testObserve_whenManySubscribers_eachGetsEveryEventInOrder() {
        let media = makeMedia(SharedMedia.shortWAV)
        let logs = (0..<100).map { _ in Recorder<UInt32>() }
        let tokens = logs.map { log in
            media.observe(.metaChanged) { event in
                if case .metaChanged(let key) = event { log.record(key.rawValue) }
            }
        }
        for key in MetaKey.orderedSample { media.setMetaOnCallingThread(key, "v") }
        let expected = MetaKey.orderedSample.map(\.rawValue)
        XCTAssertTrue(logs.allSatisfy { $0.values == expected })
        tokens.forEach { $0.cancel() }
        XCTAssertEqual(media.eventHub.sinkCount, 0)
    }

    func testObserve_whenKindsGiven_filters() {
        let media = makeMedia(SharedMedia.shortWAV)
        let meta = Counter()
        let state = Counter()
        let metaToken = media.observe(.metaChanged) { _ in meta.increment() }
        let stateToken = media.observe(.stateChanged) { _ in state.increment() }
        media.setMetaOnCallingThread(.title, "x")
        XCTAssertEqual(meta.count, 1)
        XCTAssertEqual(state.count, 0)
        metaToken.cancel()
        stateToken.cancel()
    }

    /// A subscription made inside a handler sees the following events, not the current one
    /// (the handler list is a snapshot per event).
    func testObserve_whenCalledInsideAHandler_newSubscriptionGetsLaterEvents() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
            let inner = Counter()
            let innerTokens = Recorder<EventSubscription>()
            let mediaRef = WeakBox(media)
            let outer = media.observe(.metaChanged) { _ in
                guard innerTokens.count == 0, let media = mediaRef.value else { return }
                innerTokens.record(media.observe(.metaChanged) { _ in inner.increment() })
            }
            runWithDeadline(20, "\(mode): observe inside a handler") {
                for _ in 0..<4 { media.setMetaOnCallingThread(.title, "x") }
                if let queue = configuration.dispatchQueue { queue.sync {} }
            }
            XCTAssertEqual(innerTokens.count, 1, "\(mode)")
            XCTAssertEqual(inner.count, 3, "\(mode)")
            outer.cancel()
            innerTokens.values.forEach { $0.cancel() }
            XCTAssertEqual(media.eventHub.sinkCount, 0)
        }
    }

    /// A subscription receives the events whose delivery begins after `observe` returned. In
    /// an asynchronous configuration that includes an event libvlc sent just before, still
    /// waiting on the queue; inline (and synchronously), an event sent before is delivered
    /// before `observe` can be called. Either way no event is delivered twice or lost to a
    /// subscriber that existed when it was sent.
    func testObserve_whenAnEventWasSentBeforeAndIsStillQueued_receivesIt() {
        for mode in DispatchMode.allCases {
            let (configuration, queue) = mode.make()
            let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
            let early = EventLog<MediaEvent>()
            let late = EventLog<MediaEvent>()
            let earlyToken = media.observe(.metaChanged) { early.record($0) }
            let gate = DispatchSemaphore(value: 0)
            // The queue is held while libvlc sends, so an asynchronous delivery waits on it.
            if mode == .queueAsync { queue?.queue.async { gate.wait() } }
            runWithDeadline(20, "\(mode): sent before observe") {
                media.setMetaOnCallingThread(.title, "sent before")
                let lateToken = media.observe(.metaChanged) { late.record($0) }
                gate.signal()
                queue?.queue.sync {}
                XCTAssertEqual(early.count(of: .metaChanged), 1, "\(mode)")
                XCTAssertEqual(late.count(of: .metaChanged), mode == .queueAsync ? 1 : 0, "\(mode)")
                media.setMetaOnCallingThread(.title, "sent after")
                queue?.queue.sync {}
                XCTAssertEqual(early.count(of: .metaChanged), 2, "\(mode)")
                XCTAssertEqual(late.count(of: .metaChanged), mode == .queueAsync ? 2 : 1, "\(mode)")
                lateToken.cancel()
            }
            earlyToken.cancel()
        }
    }

    /// The source keeps its subscriptions, a token keeps nothing: a handler that captured
    /// nothing does not keep the media alive, and dropping the media completes the token.
    func testObserve_whenHandlerCapturesNothing_keepsNothingAlive() {
        let completions = Counter()
        var media: VLCMedia? = makeMedia(SharedMedia.shortWAV)
        let weakMedia = WeakBox(media!)
        let token = media!.observe(onCompletion: { completions.increment() }) { _ in }
        media!.setMetaOnCallingThread(.title, "x")
        media = nil
        // The delivery's own reference is dropped on the release queue, shortly after.
        XCTAssertTrue(waitUntil(20) { weakMedia.value == nil }, "the subscription kept the media alive")
        XCTAssertTrue(waitUntil(20) { completions.count == 1 }, "\(completions.count)")
        XCTAssertFalse(token.isActive)
        token.cancel()
    }
}
