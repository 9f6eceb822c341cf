import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// Playbacks: every start of a media begins one with an id, every event is tagged with the
/// playback whose input sent it, and each gets exactly one outcome.
final class PlaybackSessionTests: XCTestCase {
    /// The stall check's idle time: a progress stored after the clock was read (a start later
    /// than the end) counts as no time, never as a negative `UInt64` difference, which traps.
    func testElapsed_whenTheStartIsLaterThanTheEnd_isZero() {
        let earlier = DispatchTime(uptimeNanoseconds: 5_000_000_000)
        let later = DispatchTime(uptimeNanoseconds: 5_000_000_700)
        XCTAssertEqual(PlaybackTracker.elapsed(from: later, to: earlier), .zero)
        XCTAssertEqual(PlaybackTracker.elapsed(from: earlier, to: later), .nanoseconds(700))
        XCTAssertEqual(PlaybackTracker.elapsed(from: earlier, to: earlier), .zero)
    }

    /// A WAV played to its end: `began` first, one `ended` of outcome `eof`, every event of the
    /// playback tagged with id 1, in every configuration; `outcome(of:)` answers the same after.
    func testPlayToOutcome_whenWAVPlaysToItsEnd_endsOnceAsEOFWithEveryEventTagged() async throws {
        let wav = try TestMedia.wav(seconds: 0.4)
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
            let seen = Recorder<PlaybackEvent>()
            let token = player.playbacks.observe { seen.record($0) }
            player.media = VLCMedia(url: wav, library: TestLibrary.shared)
            let summary = try await withTimeout(30) { try await player.playToOutcome(timeout: .seconds(20)) }
            XCTAssertEqual(summary.outcome, .ended, "\(mode)")
            XCTAssertEqual(summary.playback, PlaybackID(rawValue: 1), "\(mode)")
            XCTAssertTrue(summary.mrl.hasSuffix("tone.wav"), summary.mrl)
            XCTAssertTrue(seen.wait(timeout: 20) { $0.kind == .ended }, "\(mode): \(seen.values.map(\.name))")
            let events = seen.values
            XCTAssertEqual(events.first?.kind, .began, "\(mode): \(events.map(\.name))")
            XCTAssertEqual(events.filter { $0.kind == .ended }.count, 1, "\(mode)")
            XCTAssertEqual(Set(events.map(\.playback)), [summary.playback], "\(mode)")
            XCTAssertTrue(events.contains { $0.kind == .player(.endReached) }, "\(mode): \(events.map(\.name))")
            XCTAssertTrue(events.contains { $0.kind == .media(.stateChanged) }, "\(mode): the media's events")
            let again = try await player.outcome(of: summary.playback, timeout: .seconds(1))
            XCTAssertEqual(again, summary)
            token.cancel()
        }
    }

    /// `stop()` while a paced WAV plays: outcome `stopped`, with the time reached.
    func testOutcome_whenStoppedWhilePlaying_isStoppedWithTheTimeReached() async throws {
        let wav = try TestMedia.wav(seconds: 10)
        let player = VLCMediaPlayer(
            library: TestLibrary.shared, options: PlayerOptions(audio: .discardInRealTime))
        player.media = VLCMedia(url: wav, library: TestLibrary.shared)
        let playing = player.events(.timeChanged)
        guard let playback = await player.startPlayback() else { return XCTFail("no playback began") }
        _ = try await withTimeout(20) {
            for await event in playing { if case .timeChanged(let ms) = event, ms > 300 { break } }
        }
        player.stop()
        let summary = try await player.outcome(of: playback, timeout: .seconds(20))
        XCTAssertEqual(summary.outcome, .stopped)
        XCTAssertGreaterThan(summary.time, 300)
        XCTAssertLessThan(summary.time, 9000)
    }

    /// A new media set while one plays: the running playback is `skipped`, the next start is
    /// playback 2.
    func testOutcome_whenMediaReplacedWhilePlaying_isSkippedAndTheNextStartIsTheNextID() async throws {
        let long = try TestMedia.wav(seconds: 10)
        let short = try TestMedia.wav(seconds: 0.3)
        let player = VLCMediaPlayer(
            library: TestLibrary.shared, options: PlayerOptions(audio: .discardInRealTime))
        player.media = VLCMedia(url: long, library: TestLibrary.shared)
        // Subscribed before the start: its Playing may come before startPlayback returns.
        var started: PlaybackID?
        _ = try await player.waitFor(.playing, timeout: .seconds(20)) { started = await player.startPlayback() }
        guard let first = started else { return XCTFail("no playback began") }
        player.media = VLCMedia(url: short, library: TestLibrary.shared)
        let skipped = try await player.outcome(of: first, timeout: .seconds(20))
        XCTAssertEqual(skipped.outcome, .skipped)
        XCTAssertNil(player.currentPlayback)
        let second = try await player.playToOutcome(timeout: .seconds(20))
        XCTAssertEqual(second.playback, PlaybackID(rawValue: 2))
        XCTAssertEqual(second.outcome, .ended)
    }

    /// A start still queued when the player's wrapper goes (a `play()` just before it is
    /// dropped, a playlist's advance) begins nothing: the playback would come after the
    /// player's last event, seen by no subscriber, and the teardown would stop it at once.
    func testPlay_whenQueuedBeforeThePlayerIsDropped_beginsNoPlaybackAfterItsTeardown() throws {
        for round in 1...3 {
            let media = VLCMedia(path: SharedMedia.twoSecondWAV.path, library: TestLibrary.shared)
            var player: VLCMediaPlayer? = VLCMediaPlayer(media: media, library: TestLibrary.shared)
            let driver = try XCTUnwrap(player?.driver)
            // The control queue waits until the wrapper is gone: the play runs after its deinit.
            let gone = DispatchSemaphore(value: 0)
            player?.control.queue.async { _ = gone.wait(timeout: .now() + 20) }
            player?.play()
            // The last reference: the deinit runs here, or where a delivery's lease ends.
            player = nil
            XCTAssertTrue(waitUntil(20) { driver.tracker.isTornDown }, "round \(round): no deinit")
            gone.signal()
            XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 20), "round \(round)")
            XCTAssertNil(driver.tracker.current, "round \(round): a playback began after the teardown")
        }
    }

    /// A missing file fails with the cause libvlc logged for its input.
    func testOutcome_whenFileIsMissing_failsWithLibvlcsCause() async throws {
        let missing = try TestMedia.missing()
        let player = VLCMediaPlayer(library: TestLibrary.shared, options: PlayerOptions(recordsFailureCauses: true))
        player.media = VLCMedia(url: missing, library: TestLibrary.shared)
        let summary = try await withTimeout(30) { try await player.playToOutcome(timeout: .seconds(20)) }
        guard let failure = summary.outcome.failure else { return XCTFail("\(summary.outcome)") }
        XCTAssertEqual(failure.reason, .encounteredError)
        XCTAssertTrue(failure.cause?.contains("No such file") ?? false, "\(failure.cause ?? "no cause")")
    }

    /// `/dev/zero` never gives a track (libvlc reads it forever): reported stalled, then failed,
    /// within the stall timeout. The timeout leaves libvlc time to reach `Playing` on two busy
    /// cores (with 1 s, a loaded run's stall came while it was still opening: `.opening`).
    func testOutcome_whenSourceNeverGivesATrack_stallsAndFailsWithinTheTimeout() async throws {
        let player = VLCMediaPlayer(library: TestLibrary.shared, options: PlayerOptions(stallTimeout: .seconds(3)))
        let seen = Recorder<PlaybackEvent>()
        let token = player.playbacks.observe { seen.record($0) }
        player.media = VLCMedia(path: "/dev/zero", library: TestLibrary.shared)
        let started = ContinuousClock.now
        let summary = try await withTimeout(30) { try await player.playToOutcome(timeout: .seconds(20)) }
        let took = ContinuousClock.now - started
        XCTAssertEqual(summary.outcome.failure?.reason, .stalled(.noTrack, seconds: 3), "\(summary.outcome)")
        XCTAssertGreaterThanOrEqual(took, .seconds(3))
        XCTAssertLessThan(took, .seconds(12))
        XCTAssertTrue(seen.wait(timeout: 10) { $0.kind == .ended })
        let kinds = seen.values.map(\.kind)
        guard let stalled = kinds.firstIndex(of: .stalled), let ended = kinds.firstIndex(of: .ended) else {
            return XCTFail("\(kinds)")
        }
        XCTAssertLessThan(stalled, ended)
        token.cancel()
    }

    /// A paced 3 s WAV takes 3 s (± 10 %) with no sound card.
    func testPacedAudio_whenThreeSecondWAVPlays_takesThreeSeconds() async throws {
        let wav = try TestMedia.wav(seconds: 3)
        let player = VLCMediaPlayer(
            library: TestLibrary.shared, options: PlayerOptions(audio: .discardInRealTime))
        player.media = VLCMedia(url: wav, library: TestLibrary.shared)
        let playing = player.events(.playing)
        let ended = player.events(.endReached)
        player.play()
        _ = try await playing.first(kinds: [.playing], timeout: .seconds(20))
        let start = ContinuousClock.now
        _ = try await ended.first(kinds: [.endReached], timeout: .seconds(20))
        let took = (ContinuousClock.now - start).seconds
        XCTAssertEqual(took, 3, accuracy: 0.3, "\(took) s")
    }
}
