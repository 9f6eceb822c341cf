import CLibVLC
import CLibVLCFixes
import CVLCTestSupport
import Foundation
@testable import MediaEvents
import Synchronization
import TestSupport
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
        let media = NativeMedia.new(path: SharedMedia.shortWAV.path, in: TestLibrary.shared.native)!
        XCTAssertEqual(mel_media_refcount_peek(media.pointer), 1)
        media.retain()
        XCTAssertEqual(mel_media_refcount_peek(media.pointer), 2)
        media.release()
        XCTAssertEqual(mel_media_refcount_peek(media.pointer), 1)
        media.release()
    }

    /// What is really bound in this process: the global lookup finds the replacements, and
    /// libvlc's own relocations for the two functions hold them (Debian's libvlc binds its
    /// calls at load, `BIND_NOW`); a function libvlc never calls through its relocations is not
    /// counted as bound.
    func testBinding_inThisProcess_libvlcsOwnCallsReachTheReplacements() throws {
        let libvlc = try XCTUnwrap(dlopen("libvlc.so.5", RTLD_LAZY | RTLD_NOLOAD))
        defer { dlclose(libvlc) }
        for (index, name) in ["libvlc_media_retain", "libvlc_media_release"].enumerated() {
            let replacement = mel_media_refcount_replacement(Int32(index))
            XCTAssertEqual(
                dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map(UnsafeRawPointer.init), replacement, name)
            let libvlcsOwn = try XCTUnwrap(dlsym(libvlc, name), name)
            XCTAssertNotEqual(UnsafeRawPointer(libvlcsOwn), replacement, "\(name): libvlc's own definition")
            XCTAssertEqual(mel_object_calls_bound_to(libvlcsOwn, name, replacement), 1, name)
        }
        let version = try XCTUnwrap(dlsym(libvlc, "libvlc_get_version"))
        XCTAssertEqual(
            mel_object_calls_bound_to(version, "libvlc_get_version", mel_media_refcount_replacement(0)), 0,
            "libvlc calls its own libvlc_get_version through no relocation")
    }

    /// MediaEvents as a shared library opened after libvlc (a plugin, a dynamic product opened
    /// later): the global lookup finds libvlc's functions first, so libvlc keeps calling its own.
    /// The fix then stands aside, quietly: the process goes on, the mode says "unbound", and
    /// the object's own functions forward to libvlc's. Built here from CLibVLCFixes' source and
    /// loaded by a small program that links libvlc only.
    func testPrepare_whenLoadedAsASharedLibraryAfterLibvlc_fallsBackToLibvlcsFunctionsWithoutAborting() throws {
        let build = try RefcountFixBuild.make()
        for how in ["global", "local"] {
            let run = try build.runHost(how)
            XCTAssertEqual(run.status, 0, "\(how): the program ended with \(run.status) (abort?): \(run.output)")
            XCTAssertEqual(
                run.values["mode"], Int(MEL_MEDIA_REFCOUNT_UNBOUND.rawValue), "\(how): \(run.output)")
            // libvlc's own retain (a list adding the media) and the object's forwarded one.
            XCTAssertEqual(run.values["during"], 2, "\(how): \(run.output)")
            XCTAssertEqual(run.values["after"], 1, "\(how): \(run.output)")
            XCTAssertEqual(run.values["retained"], 2, "\(how): \(run.output)")
        }
    }

    /// The same object linked before libvlc (a dynamic product the program links): the global
    /// lookup finds the replacements, libvlc's calls are bound to them, and the count is atomic.
    func testPrepare_whenLinkedAsASharedLibraryBeforeLibvlc_isAtomicAndBound() throws {
        let build = try RefcountFixBuild.make()
        let run = try build.runHost("linked")
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.values["mode"], Int(MEL_MEDIA_REFCOUNT_ATOMIC.rawValue), run.output)
        XCTAssertEqual(run.values["bound"], 1, run.output)
        XCTAssertEqual(run.values["during"], 2, run.output)
        XCTAssertEqual(run.values["after"], 1, run.output)
        XCTAssertEqual(run.values["retained"], 2, run.output)
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
        let media = NativeMedia.new(path: SharedMedia.shortWAV.path, in: library.native)!
        defer { media.release() }
        let before = mel_media_refcount_peek(media.pointer)
        let threads = 4
        let rounds = 40_000
        let lists = (0..<threads).map { _ in NativeMediaList.new(in: library.native)! }
        defer { lists.forEach { $0.release() } }
        let finished = startThreads(count: threads, timeout: 120, name: "list-add-remove") { index in
            let list = lists[index]
            for _ in 0..<rounds {
                list.lock()
                list.add(media)
                list.remove(at: 0)
                list.unlock()
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(mel_media_refcount_peek(media.pointer), before, "counts lost in \(threads * rounds * 2) changes")
    }

    /// The input thread's retains and releases (libvlc's `set_state`, at every state change
    /// of a player) racing the program's own on two more threads, while the media plays again
    /// and again.
    /// Workaround: `MediaReferenceCount` (rule 9 of SendSites.md) — this test fails without it.
    func testInputThreadsRetainsAndReleases_racingTheProgramsOwn_loseNoCount() {
        let library = TestLibrary.shared
        let media = NativeMedia.new(path: SharedMedia.shortWAV.path, in: library.native)!
        defer { media.release() }
        let player = NativeMediaPlayer.new(playing: media)!
        let before = mel_media_refcount_peek(media.pointer)
        let playing = Atomic<Bool>(true)
        let plays = Atomic<Int>(0)
        let finished = startThreads(count: 3, timeout: 120, name: "input-thread-race") { index in
            if index == 0 {
                for _ in 0..<12 {
                    player.play()
                    _ = waitUntil(5, poll: 0.002) {
                        let state = PlaybackState(native: player.state)
                        return state == .ended || state == .error
                    }
                    player.stop()
                    plays.add(1, ordering: .relaxed)
                }
                playing.store(false, ordering: .releasing)
                return
            }
            while playing.load(ordering: .acquiring) {
                for _ in 0..<1_000 {
                    media.retain()
                    media.release()
                }
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(plays.load(ordering: .relaxed), 12)
        XCTAssertEqual(mel_media_refcount_peek(media.pointer), before)
        player.release()
        XCTAssertEqual(mel_media_refcount_peek(media.pointer), before - 1, "the player's reference")
    }

    /// The last release still frees the media, exactly once and only then: libvlc sends
    /// `MediaFreed` from its own release, which the atomic release hands the last reference to.
    func testLastRelease_afterRacingRetainsAndReleases_freesTheMediaOnce() {
        let media = NativeMedia.new(path: SharedMedia.shortWAV.path, in: TestLibrary.shared.native)!
        let freed = FreedCounter()
        let context = Unmanaged.passRetained(freed)
        defer { context.release() }
        _ = media.eventManager.attach(
            Int32(libvlc_MediaFreed.rawValue),
            { _, context in
                Unmanaged<FreedCounter>.fromOpaque(context!).takeUnretainedValue().count.add(1, ordering: .relaxed)
            }, context.toOpaque())
        let finished = startThreads(count: 4, timeout: 60, name: "retain-release") { _ in
            for _ in 0..<50 {
                for _ in 0..<200 { media.retain() }
                for _ in 0..<200 { media.release() }
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(mel_media_refcount_peek(media.pointer), 1)
        XCTAssertEqual(freed.count.load(ordering: .relaxed), 0, "freed while still referenced")
        media.release()
        XCTAssertEqual(freed.count.load(ordering: .relaxed), 1)
    }
}

private final class FreedCounter: Sendable {
    let count = Atomic<Int>(0)
}

/// CLibVLCFixes' source built as a shared object, and a program that uses it the way a process
/// that loads MediaEvents as a shared library does. Built with the system's C compiler.
private struct RefcountFixBuild {
    let directory: URL

    struct Run {
        let status: Int32
        let output: String
        /// `name=value` pairs of the program's output line.
        var values: [String: Int] {
            var values: [String: Int] = [:]
            for field in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                let parts = field.split(separator: "=")
                if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
            }
            return values
        }
    }

    static func make() throws -> RefcountFixBuild {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/CLibVLCFixes").standardized
        let directory = try TestMedia.directory(name: "refcount-fix")
        // The program (RefcountFixHost/host.c) loads the object as a process that loads
        // MediaEvents as a shared library would.
        let host = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("RefcountFixHost/host.c")
        try compile([
            "-shared", "-fPIC", "-o", directory.appendingPathComponent("libmelfixes.so").path,
            sources.appendingPathComponent("media_refcount.c").path, "-I",
            sources.appendingPathComponent("include").path,
            "-lvlc", "-ldl", "-lpthread",
        ])
        try compile([
            "-o", directory.appendingPathComponent("host").path, host.path, "-lvlc", "-ldl",
        ])
        // Linked before libvlc (and kept although the program names none of its symbols).
        try compile([
            "-o", directory.appendingPathComponent("host-linked").path, host.path, "-DLINKED",
            "-L", directory.path, "-Wl,--no-as-needed", "-lmelfixes", "-Wl,-rpath," + directory.path, "-lvlc", "-ldl",
        ])
        return RefcountFixBuild(directory: directory)
    }

    func runHost(_ how: String) throws -> Run {
        let process = Process()
        let linked = how == "linked"
        process.executableURL = directory.appendingPathComponent(linked ? "host-linked" : "host")
        process.arguments = [how, directory.appendingPathComponent("libmelfixes.so").path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let status =
            process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        return Run(status: status, output: output)
    }

    private static func compile(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["cc", "-O1", "-Wall"] + arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestMedia.Failure(description: "cc \(arguments.joined(separator: " ")) failed: \(output)")
        }
    }

}
