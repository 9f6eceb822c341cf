import Foundation
@testable import MediaEvents
import XCTest

/// Calls back into the player from inside its own handlers, in every configuration. Raw
/// libvlc deadlocks on most of these (stop/play/release from the input thread); each test
/// runs under a deadline so a deadlock fails instead of hanging.
final class ReentrancyTests: XCTestCase {
    /// Plays a 2 s WAV with a handler that performs `action` on the first event of `trigger`,
    /// and waits until `expect` has been seen `times` times.
    private func playAndReenter(
        on trigger: MediaPlayerEvent.Kind, expect: MediaPlayerEvent.Kind, times: Int = 1,
        media: URL = SharedMedia.twoSecondWAV, file: StaticString = #filePath, line: UInt = #line,
        action: @escaping @Sendable (VLCMediaPlayer, EventLog<MediaPlayerEvent>) -> Void
    ) {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let log = EventLog<MediaPlayerEvent>()
            runWithDeadline(40, "\(mode): re-enter on \(trigger)", file: file, line: line) {
                // Media set after observing, so MediaChanged counts do not depend on whether
                // the control queue ran set_media before the listener was attached.
                let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
                let weakPlayer = WeakBox(player)
                let fired = Counter()
                let token = player.observe { event in
                    log.record(event)
                    if event.kind == trigger, fired.increment() == 1, let player = weakPlayer.value {
                        action(player, log)
                    }
                }
                player.media = makeMedia(media)
                player.play()
                XCTAssertTrue(
                    log.wait(for: expect, times: times, timeout: 30),
                    "\(mode): expected \(times)× \(expect), saw \(log.names.filter { !$0.hasSuffix("TimeChanged") && !$0.hasSuffix("PositionChanged") })",
                    file: file, line: line)
                token.cancel()
                player.stop()
            }
        }
    }

    func testStop_whenCalledFromPlayingHandler_stopsWithoutDeadlock() {
        playAndReenter(on: .playing, expect: .stopped) { player, _ in player.stop() }
    }

    func testStop_whenCalledFromEndReachedHandler_stopsWithoutDeadlock() {
        playAndReenter(on: .endReached, expect: .stopped, media: SharedMedia.shortWAV) { player, _ in player.stop() }
    }

    func testPause_whenCalledFromPlayingHandler_pauses() {
        playAndReenter(on: .playing, expect: .paused) { player, _ in player.pause() }
    }

    /// `play()` after EndReached plays again from the start (raw libvlc 3 ignores it).
    func testPlay_whenCalledFromEndReachedHandler_playsAgainFromTheStart() {
        playAndReenter(on: .endReached, expect: .endReached, times: 2, media: SharedMedia.shortWAV) { player, _ in
            player.play()
        }
    }

    func testPlay_whenCalledAfterEndReachedFromOutside_playsAgain() {
        let log = EventLog<MediaPlayerEvent>()
        runWithDeadline(40, "play twice") {
            let player = VLCMediaPlayer(media: makeMedia(SharedMedia.shortWAV), library: TestLibrary.shared)
            let token = player.observe(.playing, .endReached) { log.record($0) }
            player.play()
            XCTAssertTrue(log.wait(for: .endReached))
            player.play()
            XCTAssertTrue(log.wait(for: .endReached, times: 2))
            token.cancel()
        }
        XCTAssertEqual(log.events.map(\.kind), [.playing, .endReached, .playing, .endReached])
    }

    func testSetMedia_whenCalledFromPlayingHandler_changesMedia() {
        let next = SharedMedia.shortWAV
        // One MediaChanged for the first media, one for the media set from the handler.
        playAndReenter(on: .playing, expect: .mediaChanged, times: 2) { player, _ in
            player.media = makeMedia(next)
            player.play()
        }
    }

    func testCancel_whenCalledFromHandler_stopsThatSubscription() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let seen = Counter()
            let ended = EventLog<MediaPlayerEvent>()
            runWithDeadline(40, "\(mode): cancel in handler") {
                // No media yet: a player made with one sends `MediaChanged` when its control
                // queue sets it, which may be after `observe` returned but before the token is
                // in the box (what the handler cancels), in any configuration.
                let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
                let box = Box<EventSubscription>(nil)
                box.set(
                    player.observe { _ in
                        seen.increment()
                        box.current?.cancel()
                    })
                let other = player.observe(.endReached) { ended.record($0) }
                player.media = makeMedia(SharedMedia.shortWAV)
                player.play()
                XCTAssertTrue(ended.wait(for: .endReached))
                other.cancel()
            }
            XCTAssertEqual(seen.count, 1, "\(mode)")
        }
    }

    func testObserve_whenCalledFromHandler_newSubscriptionGetsLaterEvents() {
        let inner = EventLog<MediaPlayerEvent>()
        let tokens = Recorder<EventSubscription>()
        playAndReenter(on: .playing, expect: .endReached) { player, _ in
            tokens.record(player.observe(.endReached) { inner.record($0) })
        }
        XCTAssertTrue(waitUntil(10) { inner.count(of: .endReached) == 3 }, "one EndReached per configuration")
        tokens.values.forEach { $0.cancel() }
    }

    /// The handler drops the last reference to the player: its deinit must not run on
    /// libvlc's thread (it would stop/join the input thread from inside it).
    func testDropPlayer_whenLastReferenceDroppedInsideHandler_tearsDownWithoutDeadlock() {
        for mode in DispatchMode.allCases {
            for trigger in [MediaPlayerEvent.Kind.playing, .endReached] {
                let (configuration, _) = mode.make()
                let completions = Counter()
                let freed = Recorder<Bool>()
                runWithDeadline(40, "\(mode): drop player on \(trigger)") {
                    let holder = Box<VLCMediaPlayer>(
                        VLCMediaPlayer(
                            media: makeMedia(SharedMedia.shortWAV), library: TestLibrary.shared,
                            configuration: configuration))
                    let weakPlayer = WeakBox(holder.current!)
                    let token = holder.current!.observe(onCompletion: { completions.increment() }) { event in
                        if event.kind == trigger { holder.clear() }
                    }
                    holder.current?.play()
                    XCTAssertTrue(completions.wait(forAtLeast: 1, timeout: 30), "\(mode)/\(trigger): no teardown")
                    freed.record(waitUntil(20) { weakPlayer.value == nil })
                    XCTAssertFalse(token.isActive)
                }
                XCTAssertEqual(completions.count, 1, "\(mode)/\(trigger)")
                XCTAssertEqual(freed.values, [true], "\(mode)/\(trigger)")
            }
        }
    }

    /// The handler drops the last reference to the media being played (the player lets go
    /// of it too): the media's teardown must not run inside its own callback.
    func testDropMedia_whenLastReferenceDroppedInsideHandler_tearsDownWithoutDeadlock() {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let completions = Counter()
            runWithDeadline(40, "\(mode): drop media in its handler") {
                let mediaHolder = Box<VLCMedia>(makeMedia(SharedMedia.shortWAV, configuration: configuration))
                let player = VLCMediaPlayer(
                    media: mediaHolder.current!, library: TestLibrary.shared,
                    configuration: configuration)
                let weakMedia = WeakBox(mediaHolder.current!)
                let weakPlayer = WeakBox(player)
                let token = mediaHolder.current!.observe(.stateChanged, onCompletion: { completions.increment() }) {
                    _ in
                    weakPlayer.value?.media = nil
                    mediaHolder.clear()
                }
                player.play()
                XCTAssertTrue(completions.wait(forAtLeast: 1, timeout: 30), "\(mode): media never torn down")
                XCTAssertTrue(waitUntil(20) { weakMedia.value == nil })
                XCTAssertFalse(token.isActive)
                player.stop()
            }
            // The completion runs on the release queue, just after the media's teardown.
            XCTAssertTrue(waitUntil(20) { completions.count == 1 }, "\(mode): \(completions.count)")
        }
    }

    /// Sync delivery onto a queue Q while Q itself calls stop() and then drops the player as
    /// events flow: libvlc's thread waits for Q, and Q must never wait for libvlc's thread.
    func testSyncQueue_whenQueueStopsAndDropsPlayerWhileEventsFlow_doesNotDeadlock() {
        for round in 0..<5 {
            let marked = MarkedQueue(label: "test.reentrancy.q")
            let configuration = EventsQueueConfiguration(queue: marked.queue, isAsync: false)
            let completions = Counter()
            runWithDeadline(40, "round \(round): Q stops and drops the player") {
                let holder = Box<VLCMediaPlayer>(
                    VLCMediaPlayer(
                        media: makeMedia(SharedMedia.twoSecondWAV), library: TestLibrary.shared,
                        configuration: configuration))
                let weakPlayer = WeakBox(holder.current!)
                let progress = Counter()
                let token = holder.current!.observe(onCompletion: { completions.increment() }) { _ in
                    progress.increment()
                }
                holder.current?.play()
                XCTAssertTrue(progress.wait(forAtLeast: 3, timeout: 30))
                marked.queue.async {
                    holder.current?.stop()
                    holder.current?.play()
                    holder.current?.stop()
                    holder.clear()
                }
                XCTAssertTrue(completions.wait(forAtLeast: 1, timeout: 30), "no teardown")
                XCTAssertTrue(waitUntil(20) { weakPlayer.value == nil })
                XCTAssertFalse(token.isActive)
            }
            XCTAssertEqual(completions.count, 1)
        }
    }
}
