import Foundation
@testable import MediaEvents
import XCTest

/// The recorder on real libvlc: it records what a subscriber beside it receives, calls before
/// the events they cause, and nothing once it is gone.
final class EventRecorderTests: XCTestCase {
    func testRecorder_whenAttachedBesideASubscriberInEveryConfiguration_recordsWhatTheSubscriberReceives() throws {
        for mode in DispatchMode.allCases {
            let log = EventLog<MediaPlayerEvent>()
            let ends = EventLog<PlaybackEvent>()
            let recorder = EventRecorder()
            runWithDeadline(30, "record a WAV played in \(mode)") {
                let player = VLCMediaPlayer(
                    library: TestLibrary.shared, configuration: mode.make(label: "test.recorder").configuration)
                let token = player.observe { log.record($0) }
                let endToken = player.playbacks.observe(.ended) { ends.record($0) }
                let id = recorder.attach(player, name: "main")
                let controls = recorder.recordingCalls(of: player)
                XCTAssertEqual(recorder.attach(player), id, "attaching again gives the same object")
                controls.media = makeMedia(SharedMedia.shortWAV)
                controls.play()
                XCTAssertTrue(ends.wait(for: .ended), "\(mode): no end: \(log.names)")
                XCTAssertTrue(log.wait(for: .stopped), "\(mode): no Stopped after the end: \(log.names)")
                controls.stop()
                XCTAssertTrue(log.wait(for: .stopped, times: 2), "\(mode): no Stopped after stop(): \(log.names)")
                // The recorder is a subscriber of its own: its delivery of that Stopped may
                // come after the test's.
                XCTAssertTrue(
                    waitUntil(10) {
                        Self.countThroughSecondStop(recorder.recording.entries.filter(\.isPlayerEvent).map(\.name))
                            != nil
                    },
                    "\(mode): the recorder got no second Stopped")
                recorder.stop()
                token.cancel()
                endToken.cancel()
            }
            let recording = recorder.recording
            XCTAssertEqual(recording.libvlcVersion, VLCLibrary.version)
            XCTAssertEqual(recording.objects.map(\.kind), [.player, .playbacks], "\(mode)")
            XCTAssertEqual(recording.objects.first?.name, "main")
            XCTAssertEqual(recording.objects.last?.parent, recording.objects.first?.id)
            // Compared through the second Stopped: what libvlc sends after it (the closed
            // output's `AudioVolume` -1) may reach one of the two before it is stopped or
            // cancelled and not the other.
            let player = recording.entries.filter(\.isPlayerEvent)
            let recorded = Array(player.prefix(Self.countThroughSecondStop(player.map(\.name)) ?? 0))
            let logged = Array(log.events.prefix(Self.countThroughSecondStop(log.names) ?? 0))
            XCTAssertFalse(logged.isEmpty, "\(mode): \(log.names)")
            XCTAssertEqual(recorded.map(\.name), logged.map(\.name), "\(mode): the recorder saw another sequence")
            XCTAssertEqual(recorded.map(\.fields), logged.map { Recording.fields(of: $0) }, "\(mode)")
            XCTAssertEqual(recording.entries.map(\.seq), Array(1...recording.entries.count), "\(mode)")
            XCTAssertEqual(recording.entries.map(\.time), recording.entries.map(\.time).sorted(), "\(mode)")
            // Each call comes before what it caused.
            let seq = { (kind: RecordedEntry.Kind, name: String) in
                recording.entries.first { $0.kind == kind && $0.name == name }?.seq ?? -1
            }
            XCTAssertEqual(recording.calls.map(\.name), ["setMedia", "play", "stop"], "\(mode)")
            XCTAssertEqual(
                recording.calls.first?.fields,
                [RecordedField("mrl", .string(URL(fileURLWithPath: SharedMedia.shortWAV.path).absoluteString))])
            XCTAssertLessThan(seq(.call, "setMedia"), seq(.event, "MediaPlayerMediaChanged"), "\(mode)")
            XCTAssertLessThan(seq(.call, "play"), seq(.event, "PlaybackBegan"), "\(mode)")
            let ended = recording.entries.first { $0.name == "PlaybackEnded" }
            XCTAssertEqual(ended?.playback, PlaybackID(rawValue: 1))
            XCTAssertEqual(ended?[field: "outcome"], .string("eof"), "\(mode)")
        }
    }

    /// How many of `names` come up to and with the second `MediaPlayerStopped`; `nil` before it.
    private static func countThroughSecondStop(_ names: [String]) -> Int? {
        let stops = names.indices.filter { names[$0] == "MediaPlayerStopped" }
        return stops.count >= 2 ? stops[1] + 1 : nil
    }

    func testRecorder_whenMaximumEntries_keepsTheLastOnes() {
        let recorder = EventRecorder(maximumEntries: 100)
        for index in 1...1000 { recorder.mark("Mark\(index)") }
        let entries = recorder.recording.entries
        XCTAssertEqual(entries.map(\.seq), Array(901...1000))
        XCTAssertEqual(entries.last?.name, "Mark1000")
    }

    func testRecorder_whenDeinitializedOrStopped_leavesTheObjectsSubscribers() {
        let media = makeMedia(SharedMedia.shortWAV)
        var recorder: EventRecorder? = EventRecorder()
        recorder?.attach(media)
        XCTAssertEqual(media.eventHub.sinkCount, 1)
        recorder = nil
        XCTAssertEqual(media.eventHub.sinkCount, 0, "a recorder gone still listened")
        let stopped = EventRecorder()
        stopped.attach(media)
        stopped.stop()
        XCTAssertEqual(media.eventHub.sinkCount, 0)
        media.setMeta(.title, "after the stop")
        XCTAssertEqual(stopped.recording.entries, [])
        withExtendedLifetime(recorder) {}
    }
}

extension RecordedEntry {
    fileprivate var isPlayerEvent: Bool { kind == .event && source == "player" }
}
