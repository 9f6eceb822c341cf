import CLibVLC
import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// MediaEvents against ground truth: a raw C listener (CVLCTestSupport's rawrec) attached to
/// the same native player and media must see exactly the events MediaEvents delivers, in the
/// same order, with the same payloads, in every dispatch configuration.
final class FidelityTests: XCTestCase {
    /// One event in rawrec's payload mapping (see CVLCTestSupport.h).
    struct Flat: Equatable, CustomStringConvertible {
        let type: Int32
        let i1: Int64
        let i2: Int64
        let f: Double
        let s: String?
        var description: String { "\(RawEventRecorder.name(of: type)) i1=\(i1) i2=\(i2) f=\(f) s=\(s ?? "nil")" }

        init(type: Int32, i1: Int64 = 0, i2: Int64 = 0, f: Double = 0, s: String? = nil) {
            self.type = type; self.i1 = i1; self.i2 = i2; self.f = f; self.s = s
        }

        init(_ raw: RawEvent) { self.init(type: raw.type, i1: raw.i1, i2: raw.i2, f: raw.f, s: raw.s) }

        init(_ event: MediaPlayerEvent) {
            let type = event.kind.nativeType
            switch event {
            case .mediaChanged(let media): self.init(type: type, i1: media == nil ? 0 : 1)
            case .buffering(let percent): self.init(type: type, f: Double(percent))
            case .timeChanged(let ms): self.init(type: type, i1: ms)
            case .positionChanged(let position): self.init(type: type, f: Double(position))
            case .seekableChanged(let flag), .pausableChanged(let flag), .scrambledChanged(let flag):
                self.init(type: type, i1: flag ? 1 : 0)
            case .titleChanged(let title): self.init(type: type, i1: Int64(title))
            case .chapterChanged(let chapter): self.init(type: type, i1: Int64(chapter))
            case .snapshotTaken(let path): self.init(type: type, s: path)
            case .lengthChanged(let ms): self.init(type: type, i1: ms)
            case .voutChanged(let count): self.init(type: type, i1: Int64(count))
            case .esAdded(let track, let id), .esDeleted(let track, let id), .esSelected(let track, let id):
                self.init(type: type, i1: Int64(track.rawValue), i2: Int64(id))
            case .audioVolume(let volume): self.init(type: type, f: Double(volume))
            case .audioDevice(let device): self.init(type: type, s: device)
            default: self.init(type: type)
            }
        }

        init(_ event: MediaEvent) {
            let type = event.kind.nativeType
            switch event {
            case .metaChanged(let key): self.init(type: type, i1: Int64(key.rawValue))
            case .subItemAdded, .subItemTreeAdded: self.init(type: type, i1: 1)
            case .durationChanged(let ms): self.init(type: type, i1: ms)
            case .parsedChanged(let status): self.init(type: type, i1: Int64(status.rawValue))
            case .freed: self.init(type: type, i1: 1)
            case .stateChanged(let state): self.init(type: type, i1: Int64(state.rawValue))
            }
        }
    }

    func testFidelity_whenPlayingWAV_matchesRawListener() throws {
        try assertFidelity(try TestMedia.wav(seconds: 0.5), label: "wav")
    }

    func testFidelity_whenPlayingOggVorbis_matchesRawListener() throws {
        try assertFidelity(try TestMedia.encoded(.ogg, seconds: 0.5), label: "ogg")
    }

    func testFidelity_whenPlayingFLAC_matchesRawListener() throws {
        try assertFidelity(try TestMedia.encoded(.flac, seconds: 0.5), label: "flac")
    }

    func testFidelity_whenPlayingMP3_matchesRawListener() throws {
        try assertFidelity(try TestMedia.encoded(.mp3, seconds: 0.5), label: "mp3")
    }

    /// A movie (video, two audio tracks, subtitles, chapters) on an audio output with a
    /// volume, with the calls that provoke the rest of the player's events once it plays:
    /// track selection, a chapter jump, a snapshot, volume, mute and device.
    func testFidelity_whenPlayingMovieWithPlayerCalls_matchesRawListener() throws {
        let snapshots = try TestMedia.directory(name: "fidelity-snapshots")
        let expected = [
            libvlc_MediaPlayerVout, libvlc_MediaPlayerESSelected, libvlc_MediaPlayerChapterChanged,
            libvlc_MediaPlayerTitleChanged, libvlc_MediaPlayerSnapshotTaken, libvlc_MediaPlayerAudioVolume,
            libvlc_MediaPlayerMuted, libvlc_MediaPlayerUnmuted, libvlc_MediaPlayerAudioDevice,
        ]
        try assertFidelity(SharedMedia.shortMovie, label: "movie", library: TestLibrary.withMixer, expecting: expected)
        {
            player, mode, raw in
            // A snapshot needs the video output, and a volume the audio output.
            XCTAssertTrue(raw.wait(for: libvlc_MediaPlayerVout, timeout: 10), "movie/\(mode): no Vout")
            XCTAssertTrue(waitUntil(10) { player.volume >= 0 }, "movie/\(mode): no audio output")
            player.selectTrack(2, of: .audio)
            player.selectTrack(3, of: .text)
            player.volume = 50
            player.isMuted = true
            XCTAssertTrue(raw.wait(for: libvlc_MediaPlayerMuted, timeout: 10), "movie/\(mode): no Muted")
            player.isMuted = false
            player.setAudioOutputDevice("null")
            let done = DispatchSemaphore(value: 0)
            Task {
                _ = try? await player.takeSnapshot(to: snapshots.appendingPathComponent("\(mode).png").path)
                done.signal()
            }
            _ = done.wait(timeout: .now() + 10)
            // The chapter jump last: it leaves the short movie about a second to play, in which
            // the calls above might not all have been made.
            player.setChapter(1)
        }
    }

    private func assertFidelity(
        _ url: URL, label: String, library: VLCLibrary = TestLibrary.shared,
        expecting expected: [libvlc_event_e] = [],
        file: StaticString = #filePath, line: UInt = #line,
        whilePlaying calls: (@Sendable (VLCMediaPlayer, DispatchMode, RawEventRecorder) -> Void)? = nil
    ) throws {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let raw = RawEventRecorder()
            let playerEvents = Recorder<Flat>()
            let mediaEvents = Recorder<Flat>()
            runWithDeadline(40, "\(label)/\(mode): fidelity playback", file: file, line: line) {
                let media = VLCMedia(path: url.path, library: library, configuration: configuration)
                let player = VLCMediaPlayer(library: library, configuration: configuration)
                // MediaEvents attaches first (on subscription), the raw listener second: libvlc
                // calls both from the same libvlc_event_send, one after the other.
                let playerToken = player.observe { playerEvents.record(Flat($0)) }
                let mediaToken = media.observe { mediaEvents.record(Flat($0)) }
                raw.attach(
                    player.native.current!.eventManager, tag: 1, types: RawEventRecorder.playerEventTypes)
                raw.attach(media.native.eventManager, tag: 2, types: RawEventRecorder.mediaEventTypes)
                player.media = media
                player.play()
                if let calls {
                    XCTAssertTrue(
                        raw.wait(for: libvlc_MediaPlayerPlaying, timeout: 30), "\(label)/\(mode): \(raw.names)",
                        file: file, line: line)
                    calls(player, mode, raw)
                }
                XCTAssertTrue(
                    raw.wait(for: libvlc_MediaPlayerEndReached, timeout: 30), "\(label)/\(mode): \(raw.names)",
                    file: file, line: line)
                let stopped = DispatchSemaphore(value: 0)
                Task {
                    await player.stopAndWait()
                    stopped.signal()
                }
                XCTAssertEqual(stopped.wait(timeout: .now() + 20), .success, file: file, line: line)
                // Async deliveries may still be queued: wait until both sides agree in count.
                _ = waitUntil(20) {
                    raw.events.filter { $0.sourceTag == 1 }.count == playerEvents.count
                        && raw.events.filter { $0.sourceTag == 2 }.count == mediaEvents.count
                }
                // Detach the raw listener while the objects are alive, before they go away.
                raw.detachAll()
                playerToken.cancel()
                mediaToken.cancel()
            }
            let rawPlayer = raw.events.filter { $0.sourceTag == 1 }.map(Flat.init)
            let rawMedia = raw.events.filter { $0.sourceTag == 2 }.map(Flat.init)
            XCTAssertGreaterThan(rawPlayer.count, 5, "\(label)/\(mode): \(rawPlayer)", file: file, line: line)
            for type in expected {
                XCTAssertTrue(
                    rawPlayer.contains { $0.type == Int32(bitPattern: type.rawValue) },
                    "\(label)/\(mode): no \(RawEventRecorder.name(of: Int32(bitPattern: type.rawValue)))",
                    file: file, line: line)
            }
            XCTAssertEqual(
                playerEvents.values, rawPlayer, "\(label)/\(mode): player events differ",
                file: file, line: line)
            XCTAssertEqual(
                mediaEvents.values, rawMedia, "\(label)/\(mode): media events differ",
                file: file, line: line)
        }
    }
}
