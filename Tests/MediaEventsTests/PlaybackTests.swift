import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// Real headless playback through the public API.
final class PlaybackTests: XCTestCase {
    func testPlay_whenShortWAV_deliversOpeningPlayingEndReachedInOrderWithPayloads() throws {
        let wav = try TestMedia.wav(seconds: 2)
        let log = EventLog<MediaPlayerEvent>()
        runWithDeadline(30, "play a WAV to its end") {
            let player = VLCMediaPlayer(media: makeMedia(wav), library: TestLibrary.shared)
            let token = player.observe { log.record($0) }
            player.play()
            XCTAssertTrue(log.wait(for: .endReached), "no EndReached: \(log.names)")
            token.cancel()
        }
        let kinds = log.events.map(\.kind)
        let opening = kinds.firstIndex(of: .opening)
        let playing = kinds.firstIndex(of: .playing)
        let end = kinds.firstIndex(of: .endReached)
        XCTAssertNotNil(opening, "\(log.names)")
        XCTAssertNotNil(playing, "\(log.names)")
        if let opening, let playing, let end {
            XCTAssertLessThan(opening, playing)
            XCTAssertLessThan(playing, end)
        }
        XCTAssertEqual(log.count(of: .endReached), 1)
        XCTAssertEqual(log.count(of: .encounteredError), 0, "\(log.names)")
        let lengths = log.events.compactMap { if case .lengthChanged(let ms) = $0 { ms } else { nil } }
        XCTAssertFalse(lengths.isEmpty, "no LengthChanged: \(log.names)")
        if let length = lengths.last { XCTAssertEqual(Double(length), 2000, accuracy: 100) }
        let times = log.events.compactMap { if case .timeChanged(let ms) = $0 { ms } else { nil } }
        XCTAssertGreaterThanOrEqual(times.count, 2, "too few TimeChanged: \(times)")
        XCTAssertEqual(times, times.sorted(), "TimeChanged went backwards: \(times)")
        if let first = times.first, let last = times.last { XCTAssertGreaterThan(last, first) }
        XCTAssertLessThanOrEqual(times.last ?? 0, 2100)
        print("TimeChanged: \(times)")
    }

    /// What the README says about the end of a media (several media, several runs each):
    /// libvlc sends `EndReached`, then one `Stopped` of its own; a `stop()` after that sends
    /// one more.
    func testEnd_whenNaturalEnd_sendsOneStoppedAndStopSendsOneMore() throws {
        let media = try [0.2, 0.4, 0.6].map { try TestMedia.wav(seconds: $0, name: "end-\($0).wav") }
        for url in media {
            for run in 0..<3 {
                let log = EventLog<MediaPlayerEvent>()
                let atStop = Locked<[MediaPlayerEvent.Kind]>([])
                runWithDeadline(30, "play \(url.lastPathComponent) to its end, then stop") {
                    let player = VLCMediaPlayer(media: makeMedia(url), library: TestLibrary.shared)
                    let token = player.observe { log.record($0) }
                    player.play()
                    XCTAssertTrue(log.wait(for: .endReached), "no EndReached: \(log.names)")
                    XCTAssertTrue(log.wait(for: .stopped), "no Stopped after the end: \(log.names)")
                    // Time for a second Stopped to arrive, if libvlc sent one.
                    Thread.sleep(forTimeInterval: 0.3)
                    atStop.withLock { $0 = log.events.map(\.kind) }
                    player.stop()
                    XCTAssertTrue(log.wait(for: .stopped, times: 2), "no Stopped after stop(): \(log.names)")
                    Thread.sleep(forTimeInterval: 0.3)
                    token.cancel()
                }
                let what = "\(url.lastPathComponent) run \(run): \(log.names.filter { !$0.hasSuffix("Changed") })"
                XCTAssertEqual(
                    atStop.withLock { $0 }.drop { $0 != .endReached }.filter { $0 == .stopped }.count, 1, what)
                XCTAssertEqual(log.count(of: .stopped), 2, what)
                XCTAssertEqual(log.count(of: .endReached), 1, what)
            }
        }
    }

    func testPlay_whenFileMissing_deliversEncounteredError() throws {
        try assertPlaybackFails(try TestMedia.missing())
    }

    func testPlay_whenFileEmpty_deliversEncounteredError() throws {
        try assertPlaybackFails(try TestMedia.empty())
    }

    func testMediaChanged_whenMediaSet_carriesTheNewMedia() throws {
        let wav = SharedMedia.shortWAV
        let log = EventLog<MediaPlayerEvent>()
        runWithDeadline(30, "set media") {
            let player = VLCMediaPlayer(library: TestLibrary.shared)
            let token = player.observe(.mediaChanged) { log.record($0) }
            let media = makeMedia(wav)
            player.media = media
            XCTAssertTrue(log.wait(for: .mediaChanged), "\(log.names)")
            if case .mediaChanged(let sent)? = log.events.first {
                XCTAssertEqual(sent?.mrl, media.mrl)
            }
            token.cancel()
        }
    }

    private func assertPlaybackFails(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let log = EventLog<MediaPlayerEvent>()
        runWithDeadline(30, "play \(url.lastPathComponent)", file: file, line: line) {
            let player = VLCMediaPlayer(media: makeMedia(url), library: TestLibrary.shared)
            let token = player.observe { log.record($0) }
            player.play()
            XCTAssertEqual(
                log.wait(forAnyOf: [.encounteredError, .endReached]), .encounteredError,
                "\(log.names)", file: file, line: line)
            token.cancel()
        }
        XCTAssertEqual(log.count(of: .endReached), 0, "\(log.names)", file: file, line: line)
        XCTAssertEqual(log.count(of: .playing), 0, "\(log.names)", file: file, line: line)
    }
}
