import Foundation
import MediaEvents
import TestSupport
import XCTest

/// Makes the recordings the example test replays (Tests/MediaEventsTests/Recordings) on real
/// libvlc, and runs the example's scenarios on the fresh ones too, so the kept files cannot
/// drift from what libvlc sends. `MEDIAEVENTS_WRITE_RECORDINGS=1` writes the fresh ones over
/// the kept ones (after a libvlc update, say), with the test's temporary folder shown as /media.
final class RecordingFixtureTests: XCTestCase {
    private static let writes = ProcessInfo.processInfo.environment["MEDIAEVENTS_WRITE_RECORDINGS"] == "1"

    func testRecordings_whenMadeAgainOnRealLibvlc_driveTheExampleControllerTheSameWay() async throws {
        let natural = try await recordNaturalEnd()
        try await RecordingExampleTests.assertNaturalEnd(natural)
        let failure = try await recordFailure()
        try await RecordingExampleTests.assertFailure(failure)
        let late = try await recordLateEndAfterMediaChange()
        try await RecordingExampleTests.assertLateEnd(late)
        if Self.writes {
            let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "Recordings")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, recording) in [
                ("natural-end", natural), ("failure", failure), ("late-end-after-media-change", late),
            ] {
                try Data(Self.withoutTemporaryFolder(recording.jsonLines).utf8)
                    .write(to: folder.appendingPathComponent("\(name).jsonl"))
            }
        }
    }

    /// The text with every path under the test's temporary folder (and the fresh folder of
    /// each file, a UUID) shown under /media.
    private static func withoutTemporaryFolder(_ text: String) -> String {
        let root = TestMedia.root.standardizedFileURL
        let url = root.absoluteString.hasSuffix("/") ? root.absoluteString : root.absoluteString + "/"
        let path = root.path.hasSuffix("/") ? root.path : root.path + "/"
        let moved = text.replacingOccurrences(of: url, with: "file:///media/")
            .replacingOccurrences(of: path, with: "/media/")
        let fresh = try! NSRegularExpression(pattern: "/media/[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}/")
        return fresh.stringByReplacingMatches(
            in: moved, range: NSRange(moved.startIndex..., in: moved), withTemplate: "/media/")
    }

    /// Polls `condition` until it holds, for at most `seconds`.
    private func eventually(_ seconds: Double, _ condition: @Sendable () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// The names of the playback events a player delivered, with their playback.
    private final class Seen: Sendable {
        let names = Locked<[String]>([])
        func has(_ name: String, playback: UInt64) -> Bool {
            names.withLock { $0.contains("\(name)#\(playback)") }
        }
    }

    private func watch(_ player: VLCMediaPlayer, _ seen: Seen) -> EventSubscription {
        player.playbacks.observe { event in seen.names.withLock { $0.append("\(event.name)#\(event.playback)") } }
    }

    /// A WAV set and played to its end.
    private func recordNaturalEnd() async throws -> Recording {
        let recorder = EventRecorder()
        let player = VLCMediaPlayer(library: TestLibrary.shared)
        let seen = Seen()
        let token = watch(player, seen)
        recorder.attach(player, name: "player")
        let controls = recorder.recordingCalls(of: player)
        controls.media = VLCMedia(
            path: try TestMedia.wav(seconds: 0.3, name: "tone.wav").path, library: TestLibrary.shared)
        controls.play()
        let ended = await eventually(30) { seen.has("MediaPlayerStopped", playback: 1) }
        XCTAssertTrue(ended, "\(seen.names.withLock { $0 })")
        await player.waitForPendingControls()
        token.cancel()
        recorder.stop()
        return recorder.recording
    }

    /// A missing file set and played: it fails.
    private func recordFailure() async throws -> Recording {
        let recorder = EventRecorder()
        let player = VLCMediaPlayer(library: TestLibrary.shared, options: PlayerOptions(recordsFailureCauses: true))
        let seen = Seen()
        let token = watch(player, seen)
        recorder.attach(player, name: "player")
        let controls = recorder.recordingCalls(of: player)
        controls.media = VLCMedia(path: try TestMedia.missing().path, library: TestLibrary.shared)
        controls.play()
        let failed = await eventually(30) { seen.has("PlaybackEnded", playback: 1) }
        XCTAssertTrue(failed, "\(seen.names.withLock { $0 })")
        await player.waitForPendingControls()
        token.cancel()
        recorder.stop()
        return recorder.recording
    }

    /// A WAV plays on a queue; libvlc sends its end while the queue is still busy with the
    /// Playing before it, and meanwhile the user loads and plays another WAV: the first one's
    /// end is delivered after the new media was set.
    private func recordLateEndAfterMediaChange() async throws -> Recording {
        let queue = DispatchQueue(label: "test.late-end")
        let recorder = EventRecorder()
        let player = VLCMediaPlayer(
            library: TestLibrary.shared, configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
        let seen = Seen()
        let token = watch(player, seen)
        recorder.attach(player, name: "player")
        // Subscribed after the recorder: the recorder has the Playing when the queue stops.
        let gate = DispatchSemaphore(value: 0)
        let held = Locked(false)
        let hold = player.observe(.playing) { _ in
            if !held.withLock({ held in
                defer { held = true }; return held
            }) {
                gate.wait()
            }
        }
        let controls = recorder.recordingCalls(of: player)
        let first = try TestMedia.wav(seconds: 0.3, name: "first.wav")
        let second = try TestMedia.wav(seconds: 0.3, name: "second.wav")
        controls.media = VLCMedia(path: first.path, library: TestLibrary.shared)
        controls.play()
        // The player's state is updated when libvlc sends an event, before any delivery: ended,
        // then stopped by libvlc's own Stopped after the end.
        let endSent = await eventually(30) { [.ended, .stopped].contains(player.state) && held.withLock { $0 } }
        XCTAssertTrue(endSent, "the first WAV did not end")
        controls.media = VLCMedia(path: second.path, library: TestLibrary.shared)
        controls.play()
        await player.waitForPendingControls()
        gate.signal()
        let ended = await eventually(30) { seen.has("PlaybackEnded", playback: 2) }
        XCTAssertTrue(ended, "\(seen.names.withLock { $0 })")
        await player.waitForPendingControls()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        token.cancel()
        hold.cancel()
        recorder.stop()
        return recorder.recording
    }
}
