import MediaEvents
import TestSupport
import XCTest

/// Makes each test end with the libvlc teardowns it queued, and the process exit only once
/// libvlc's threads have stopped.
///
/// A test process may exit right after its last test (`swift test --parallel` runs one test
/// per process). Teardowns that test queued (a discoverer released while its service scans a
/// folder, a media released while its parse runs) then still run libvlc's threads while
/// `exit` runs the static destructors of the C++ libraries libvlc loaded: seen as a crash in
/// libtag's `FileRef::parse` in 16 runs of 30 of one discoverer test on a loaded machine.
/// An `atexit` handler comes too late for that (those libraries register their destructors
/// after it, so theirs run first); an XCTest observer waits before the runner returns.
enum ProcessExit {
    /// At process exit, before the generated media are removed: a last wait, bounded.
    static func beforeCleanUp() {
        VLCLibrary.waitForPendingTeardowns(timeout: 10)
    }

    /// The main queue is run meanwhile: deliveries queued there by the main configurations
    /// hold leases until they have run.
    static func waitForTeardowns(after what: String) {
        let deadline = Date() + 30
        var done = false
        while !done, Date() < deadline {
            RunLoop.main.run(until: Date() + 0.01)
            done = VLCLibrary.waitForPendingTeardowns(timeout: 0.05)
        }
        if !done {
            let line = "ProcessExit: the teardowns queued by \(what) did not finish within 30 s\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
        }
    }
}

/// TestMedia waits through this after each test that followed the first one to make media, and
/// at exit (see `TestMediaTeardownWaiting`).
extension XCTestCase: TestMediaTeardownWaiting {
    public static func waitForTeardowns(after what: String) {
        ProcessExit.waitForTeardowns(after: what)
    }

    public static func waitBeforeMediaCleanUp() {
        ProcessExit.beforeCleanUp()
    }
}
