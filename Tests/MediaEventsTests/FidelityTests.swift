import CLibVLC
import Foundation
@testable import MediaEvents
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

    private func assertFidelity(_ url: URL, label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let raw = RawEventRecorder()
            let playerEvents = Recorder<Flat>()
            let mediaEvents = Recorder<Flat>()
            runWithDeadline(40, "\(label)/\(mode): fidelity playback", file: file, line: line) {
                let media = makeMedia(url, configuration: configuration)
                let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
                // MediaEvents attaches first (on subscription), the raw listener second: libvlc
                // calls both from the same libvlc_event_send, one after the other.
                let playerToken = player.observe { playerEvents.record(Flat($0)) }
                let mediaToken = media.observe { mediaEvents.record(Flat($0)) }
                raw.attach(libvlc_media_player_event_manager(player.native.raw), tag: 1,
                           types: RawEventRecorder.playerEventTypes)
                raw.attach(libvlc_media_event_manager(media.native.raw), tag: 2,
                           types: RawEventRecorder.mediaEventTypes)
                player.media = media
                player.play()
                XCTAssertTrue(raw.wait(for: libvlc_MediaPlayerEndReached, timeout: 30), "\(label)/\(mode): \(raw.names)",
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
            XCTAssertEqual(playerEvents.values, rawPlayer, "\(label)/\(mode): player events differ",
                           file: file, line: line)
            XCTAssertEqual(mediaEvents.values, rawMedia, "\(label)/\(mode): media events differ",
                           file: file, line: line)
        }
    }
}
