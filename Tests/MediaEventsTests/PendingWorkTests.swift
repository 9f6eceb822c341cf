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
