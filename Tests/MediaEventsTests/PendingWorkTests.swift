import Dispatch
import Glibc
@testable import MediaEvents
import TestSupport
import XCTest

/// What `VLCLibrary.waitForPendingTeardowns` counts: a queued teardown until it has returned
/// and what it captured is released. A VLM's teardown holds the last reference to its library,
/// whose `deinit` releases libvlc's instance and unloads plugins: a program that exited while
/// that ran crashed in `__cxa_finalize` (seen once under ThreadSanitizer, after
/// `VLCVLMTests.testControls_whenCalledFromOwnHandler` had passed).
final class PendingWorkTests: XCTestCase {
    func testAsync_whenTheBlockHoldsTheLastReference_isPendingUntilThatIsReleased() {
        let work = PendingWork()
        let queue = DispatchQueue(label: "pending-work-test")
        for round in 0..<5 {
            let released = Locked(false)
            // The canary's only reference is the block's: its `deinit` is slow, as a
            // library's release is, so a count that fell before it ran is seen.
            func enqueue() {
                let canary = SlowRelease { released.withLock { $0 = true } }
                work.async(on: queue) { withExtendedLifetime(canary) {} }
            }
            enqueue()
            XCTAssertTrue(work.waitForIdle(excluding: [], until: .now() + 10), "round \(round): never idle")
            XCTAssertTrue(released.withLock { $0 }, "round \(round): idle before the block's capture was released")
        }
    }

    /// A probe of a player's control queue (`afterPendingControls`) runs after the calls
    /// queued before it and does not keep the player alive meanwhile: a player dropped while
    /// its queue is busy is torn down behind those calls, and the teardown wait covers them.
    /// (A daemon's watchdog that awaited `waitForPendingControls` held the player while a
    /// `stop` ran; the exit's teardown wait then saw no teardown and cut the stop short.)
    func testAfterPendingControls_whenThePlayerIsDroppedWhileItsQueueIsBusy_doesNotKeepItAlive() {
        for round in 0..<10 {
            var player: VLCMediaPlayer? = VLCMediaPlayer(library: TestLibrary.shared)
            weak let dropped = player
            let gate = DispatchSemaphore(value: 0)
            let called = DispatchSemaphore(value: 0)
            player?.control.perform { _ in gate.wait() }
            player?.stop()
            player?.afterPendingControls { called.signal() }
            player = nil
            XCTAssertNil(dropped, "round \(round): the probe kept the player alive")
            XCTAssertEqual(called.wait(timeout: .now()), .timedOut, "round \(round): called before the calls before it")
            gate.signal()
            XCTAssertEqual(called.wait(timeout: .now() + 10), .success, "round \(round): never called")
            XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 10), "round \(round): teardown still pending")
        }
    }

    /// A subscription's completion, queued from a wrapper's `deinit`, comes when the wrapper's
    /// teardown is already pending: a program that waits for the completion, then for the
    /// teardowns (the daemon's exit, when another thread held the player a moment longer),
    /// waits for the teardown, which here waits behind a call that holds the control queue.
    func testCompletion_whenThePlayerIsDroppedOnAnotherThread_findsItsTeardownPending() {
        assertCompletionFindsTeardownPending(make: { VLCMediaPlayer(library: TestLibrary.shared) }) { player, gate in
            player.control.perform { _ in gate.wait() }
        }
    }

    func testCompletion_whenAMediaIsDroppedOnAnotherThread_findsItsTeardownPending() {
        assertCompletionFindsTeardownPending(
            make: { VLCMedia(path: "/nonexistent/pending-work.wav", library: TestLibrary.shared) }
        ) { media, gate in
            media.control.perform { _ in gate.wait() }
        }
    }

    func testCompletion_whenAListIsDroppedOnAnotherThread_findsItsTeardownPending() {
        assertCompletionFindsTeardownPending(make: { VLCMediaList(library: TestLibrary.shared) }) { list, gate in
            list.control.perform { _ in gate.wait() }
        }
    }

    func testCompletion_whenAListPlayerIsDroppedOnAnotherThread_findsItsTeardownPending() {
        assertCompletionFindsTeardownPending(make: { VLCMediaListPlayer(library: TestLibrary.shared) }) {
            listPlayer, gate in
            listPlayer.control.perform { _ in gate.wait() }
        }
    }

    /// The playlist's player is released before the playlist's subscriptions end: its
    /// teardown is pending when their completion runs.
    func testCompletion_whenAPlaylistPlayerIsDroppedOnAnotherThread_findsItsPlayersTeardownPending() {
        assertCompletionFindsTeardownPending(make: { VLCPlaylistPlayer(library: TestLibrary.shared) }) {
            playlist, gate in
            playlist.player.control.perform { _ in gate.wait() }
        }
    }

    /// Drops the only reference to a wrapper made by `make` on another thread, 50 times, while
    /// `hold` keeps its control queue busy until `gate` is signalled, and checks that the
    /// teardown is pending when the subscription's completion runs.
    private func assertCompletionFindsTeardownPending<Source: VLCEventSource>(
        make: () -> Source, hold: (Source, DispatchSemaphore) -> Void,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        for round in 0..<50 {
            let gate = DispatchSemaphore(value: 0)
            let completed = DispatchSemaphore(value: 0)
            let holder = Locked<Source?>(make())
            let token = holder.withLock { source in
                source.map { hold($0, gate) }
                return source?.observe(onCompletion: { completed.signal() }) { _ in }
            }
            DispatchQueue.global().async { holder.withLock { $0 = nil } }
            XCTAssertEqual(
                completed.wait(timeout: .now() + 10), .success, "round \(round): no completion", file: file, line: line)
            XCTAssertFalse(
                VLCLibrary.waitForPendingTeardowns(timeout: 0), "round \(round): the teardown was not pending yet",
                file: file, line: line)
            gate.signal()
            XCTAssertTrue(
                VLCLibrary.waitForPendingTeardowns(timeout: 10), "round \(round): teardown still pending", file: file,
                line: line)
            token?.cancel()
        }
    }
}

/// Calls `released` at the end of a `deinit` that takes 100 ms.
private final class SlowRelease: Sendable {
    private let released: @Sendable () -> Void

    init(_ released: @escaping @Sendable () -> Void) { self.released = released }

    deinit {
        usleep(100_000)
        released()
    }
}
