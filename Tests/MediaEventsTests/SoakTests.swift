import Foundation
import Glibc
@testable import MediaEvents
import XCTest

/// Many short plays with subscriptions created and cancelled throughout: every play ends,
/// and resident memory stays within a bound after warm-up. N comes from
/// `MEDIAEVENTS_SOAK_PLAYS` (default 30, for CI).
final class SoakTests: XCTestCase {
    func testSoak_whenPlayingRepeatedly_everyPlayEndsAndMemoryStaysBounded() {
        let plays = Int(ProcessInfo.processInfo.environment["MEDIAEVENTS_SOAK_PLAYS"] ?? "") ?? 30
        let warmUp = min(5, max(1, plays / 3))
        let boundMB = 8.0
        let completions = Counter()
        var warmRSS = 0
        var peakRSS = 0
        var warmThreads = 0
        let start = Date()
        for play in 0..<plays {
            let mode = DispatchMode.allCases[play % DispatchMode.allCases.count]
            let (configuration, _) = mode.make(label: "soak")
            let log = EventLog<MediaPlayerEvent>()
            // Kept past the play: a token's deinit cancels, and a cancelled subscription
            // never completes.
            let kept = Recorder<EventSubscription>()
            let ok = runWithDeadline(40, "soak play \(play) (\(mode))") {
                let media = makeMedia(SharedMedia.shortWAV, configuration: configuration)
                let player = VLCMediaPlayer(media: media, library: TestLibrary.shared, configuration: configuration)
                let token = player.observe(
                    .playing, .endReached, .encounteredError,
                    onCompletion: { completions.increment() }
                ) { log.record($0) }
                let mediaToken = media.observe(onCompletion: { completions.increment() }) { _ in }
                // Subscriptions come and go while the play runs.
                var churn: [EventSubscription] = []
                player.play()
                for n in 0..<50 {
                    churn.append(player.observe(.timeChanged, .positionChanged) { _ in })
                    if n % 3 == 0 { churn.removeFirst().cancel() }
                    if n % 5 == 0 { media.setMeta(.title, "\(play)-\(n)") }
                }
                XCTAssertEqual(log.wait(forAnyOf: [.endReached, .encounteredError]), .endReached, "play \(play)")
                churn.removeAll()
                kept.record(token)
                kept.record(mediaToken)
            }
            if !ok { return }
            // Both subscriptions of this play complete once its player and media are gone.
            guard completions.wait(forAtLeast: 2 * (play + 1), timeout: 20) else {
                return XCTFail("play \(play) not torn down: \(completions.count) completions")
            }
            XCTAssertTrue(kept.values.allSatisfy { !$0.isActive })
            let rss = residentMemoryBytes()
            if play + 1 == warmUp {
                warmRSS = rss
                warmThreads = threadCount()
            }
            peakRSS = max(peakRSS, rss)
        }
        XCTAssertEqual(completions.count, 2 * plays)
        let mb = { (bytes: Int) in Double(bytes) / 1_048_576 }
        let growth = mb(peakRSS - warmRSS)
        print(
            String(
                format:
                    "soak: %d plays in %.1f s; RSS after warm-up (%d plays) %.1f MB, peak %.1f MB, growth %.1f MB (bound %.0f MB)",
                plays, Date().timeIntervalSince(start), warmUp, mb(warmRSS), mb(peakRSS), growth, boundMB))
        // AddressSanitizer keeps freed memory in quarantine (up to 256 MB), so resident memory
        // says nothing about leaks there; Scripts/leaks.sh checks leaks under valgrind instead.
        if Self.isAddressSanitized {
            print("soak: AddressSanitizer build: the resident-memory bound is not meaningful and not checked")
        } else {
            XCTAssertLessThan(growth, boundMB, "resident memory grew by \(growth) MB after warm-up")
        }
        // No thread left stuck per play: libvlc's and libdispatch's pools may grow a little,
        // a leak of one thread per play would not fit.
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 20))
        let threads = threadCount()
        print("soak: threads after warm-up \(warmThreads), at the end \(threads)")
        XCTAssertLessThanOrEqual(threads, warmThreads + 16, "threads grew from \(warmThreads) to \(threads)")
    }

    /// Whether this process runs with AddressSanitizer's runtime (`swift test --sanitize=address`).
    private static var isAddressSanitized: Bool {
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(process) }
        return dlsym(process, "__asan_init") != nil
    }

    private func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }
}
