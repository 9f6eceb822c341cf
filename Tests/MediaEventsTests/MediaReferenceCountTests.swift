import CLibVLC
import CLibVLCFixes
import CVLCTestSupport
import Foundation
@testable import MediaEvents
import Synchronization
import XCTest

/// libvlc 3.0 counts a media's references with a plain `int` (`i_refcount++` and `--` in
/// lib/media.c, no lock), and calls its retain and release from several threads at once.
/// MediaEvents makes both atomic for every caller in the process (`CLibVLCFixes`). These tests
/// race libvlc's own callers and the program's on real threads and check that no count is
/// lost: each retain is matched by a release, so the count must come back to where it was.
///
/// With `MEDIAEVENTS_ATOMIC_MEDIA_REFCOUNT=0` (libvlc's own functions) the two race tests
/// fail, or crash when a lost retain frees the media while it is in use.
final class MediaReferenceCountTests: XCTestCase {
    /// The layout check passes with the libvlc these tests run against (Debian's 3.0): if it
    /// did not, every other test here would run against libvlc's non-atomic functions.
    func testReferenceCount_withTheInstalledLibvlc3_isAtomic() {
        XCTAssertTrue(
            VLCLibrary.mediaReferenceCountIsAtomic,
            "libvlc \(VLCLibrary.version): the count is not where 3.0 keeps it, or the environment disabled the fix")
        let media = libvlc_media_new_path(TestLibrary.shared.native.raw, SharedMedia.shortWAV.path)!
        XCTAssertEqual(mel_media_refcount_peek(media), 1)
        libvlc_media_retain(media)
        XCTAssertEqual(mel_media_refcount_peek(media), 2)
        libvlc_media_release(media)
        XCTAssertEqual(mel_media_refcount_peek(media), 1)
        libvlc_media_release(media)
    }

    /// The check that decides between the atomic functions and libvlc's own accepts functions
    /// that keep the count where 3.0 does and refuses a count kept elsewhere or a retain that
    /// changes anything else: with such a libvlc the process keeps libvlc's own functions.
    func testLayoutCheck_acceptsOnly3_0sPlaceWithNothingElseChanged() {
        XCTAssertEqual(mel_media_refcount_layout_matches(fakevlc_retain_3_0, fakevlc_release_3_0), 1)
        XCTAssertEqual(mel_media_refcount_layout_matches(fakevlc_retain_elsewhere, fakevlc_release_elsewhere), 0)
        XCTAssertEqual(mel_media_refcount_layout_matches(fakevlc_retain_elsewhere, fakevlc_release_3_0), 0)
        XCTAssertEqual(mel_media_refcount_layout_matches(fakevlc_retain_3_0, fakevlc_release_elsewhere), 0)
        XCTAssertEqual(mel_media_refcount_layout_matches(fakevlc_retain_marking, fakevlc_release_3_0), 0)
    }

    /// libvlc's own retains and releases, made inside libvlc on four threads at once: each
    /// thread adds the same media to a list of its own and removes it again (each list has
    /// its own lock, so nothing serializes the four media counts).
    func testLibvlcsOwnRetainsAndReleases_onFourThreadsAtOnce_loseNoCount() {
        let library = TestLibrary.shared
        let media = NativePointer(raw: libvlc_media_new_path(library.native.raw, SharedMedia.shortWAV.path)!)
        defer { libvlc_media_release(media.raw) }
        let before = mel_media_refcount_peek(media.raw)
        let threads = 4
        let rounds = 40_000
        let lists = (0..<threads).map { _ in NativePointer(raw: libvlc_media_list_new(library.native.raw)!) }
        defer { lists.forEach { libvlc_media_list_release($0.raw) } }
        let finished = startThreads(count: threads, timeout: 120, name: "list-add-remove") { index in
            let list = lists[index].raw
            for _ in 0..<rounds {
                libvlc_media_list_lock(list)
                libvlc_media_list_add_media(list, media.raw)
                libvlc_media_list_remove_index(list, 0)
                libvlc_media_list_unlock(list)
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(mel_media_refcount_peek(media.raw), before, "counts lost in \(threads * rounds * 2) changes")
    }

    /// The input thread's retains and releases (libvlc's `set_state`, at every state change
    /// of a player) racing the program's own on two more threads, while the media plays again
    /// and again.
    func testInputThreadsRetainsAndReleases_racingTheProgramsOwn_loseNoCount() {
        let library = TestLibrary.shared
        let media = NativePointer(raw: libvlc_media_new_path(library.native.raw, SharedMedia.shortWAV.path)!)
        defer { libvlc_media_release(media.raw) }
        let player = NativePointer(raw: libvlc_media_player_new_from_media(media.raw)!)
        let before = mel_media_refcount_peek(media.raw)
        let playing = Atomic<Bool>(true)
        let plays = Atomic<Int>(0)
        let finished = startThreads(count: 3, timeout: 120, name: "input-thread-race") { index in
            if index == 0 {
                for _ in 0..<12 {
                    libvlc_media_player_play(player.raw)
                    _ = waitUntil(5, poll: 0.002) {
                        let state = libvlc_media_player_get_state(player.raw)
                        return state == libvlc_Ended || state == libvlc_Error
                    }
                    libvlc_media_player_stop(player.raw)
                    plays.add(1, ordering: .relaxed)
                }
                playing.store(false, ordering: .releasing)
                return
            }
            while playing.load(ordering: .acquiring) {
                for _ in 0..<1_000 {
                    libvlc_media_retain(media.raw)
                    libvlc_media_release(media.raw)
                }
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(plays.load(ordering: .relaxed), 12)
        XCTAssertEqual(mel_media_refcount_peek(media.raw), before)
        libvlc_media_player_release(player.raw)
        XCTAssertEqual(mel_media_refcount_peek(media.raw), before - 1, "the player's reference")
    }

    /// The last release still frees the media, exactly once and only then: libvlc sends
    /// `MediaFreed` from its own release, which the atomic release hands the last reference to.
    func testLastRelease_afterRacingRetainsAndReleases_freesTheMediaOnce() {
        let media = NativePointer(raw: libvlc_media_new_path(TestLibrary.shared.native.raw, SharedMedia.shortWAV.path)!)
        let freed = FreedCounter()
        let context = Unmanaged.passRetained(freed)
        defer { context.release() }
        libvlc_event_attach(
            libvlc_media_event_manager(media.raw), Int32(libvlc_MediaFreed.rawValue),
            { _, context in
                Unmanaged<FreedCounter>.fromOpaque(context!).takeUnretainedValue().count.add(1, ordering: .relaxed)
            }, context.toOpaque())
        let finished = startThreads(count: 4, timeout: 60, name: "retain-release") { _ in
            for _ in 0..<50 {
                for _ in 0..<200 { libvlc_media_retain(media.raw) }
                for _ in 0..<200 { libvlc_media_release(media.raw) }
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(mel_media_refcount_peek(media.raw), 1)
        XCTAssertEqual(freed.count.load(ordering: .relaxed), 0, "freed while still referenced")
        libvlc_media_release(media.raw)
        XCTAssertEqual(freed.count.load(ordering: .relaxed), 1)
    }
}

private final class FreedCounter: Sendable {
    let count = Atomic<Int>(0)
}
