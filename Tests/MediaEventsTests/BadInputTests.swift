import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// Broken or unusual inputs: each ends in a defined outcome (EncounteredError, EndReached or
/// a thrown error), under a deadline. Outcomes are libvlc 3.0.24's, measured: libvlc is
/// lenient with garbage (it "plays" it to the end) and strict with what it cannot open.
final class BadInputTests: XCTestCase {
    enum Outcome: String { case encounteredError, endReached, none }

    /// Plays `url` and returns which terminal event came first.
    private func outcome(of url: URL, file: StaticString = #filePath, line: UInt = #line) -> (Outcome, [String]) {
        let log = EventLog<MediaPlayerEvent>()
        runWithDeadline(40, "play \(url)", file: file, line: line) {
            let player = VLCMediaPlayer(media: makeMedia(url), library: TestLibrary.shared)
            let token = player.observe { log.record($0) }
            player.play()
            _ = log.wait(forAnyOf: [.encounteredError, .endReached], timeout: 30)
            token.cancel()
        }
        let first = log.events.first { $0.kind == .encounteredError || $0.kind == .endReached }
        let result: Outcome =
            switch first?.kind {
            case .encounteredError: .encounteredError
            case .endReached: .endReached
            default: .none
            }
        return (result, log.names.filter { !$0.hasSuffix("TimeChanged") && !$0.hasSuffix("PositionChanged") })
    }

    func testPlay_whenPathMissing_encountersError() throws {
        let (result, names) = outcome(of: try TestMedia.missing())
        XCTAssertEqual(result, .encounteredError, "\(names)")
    }

    func testPlay_whenPathIsADirectory_endsWithEndReached() throws {
        let (result, names) = outcome(of: try TestMedia.directory())
        XCTAssertEqual(result, .endReached, "\(names)")
    }

    func testPlay_whenFileEmpty_encountersError() throws {
        let (result, names) = outcome(of: try TestMedia.empty())
        XCTAssertEqual(result, .encounteredError, "\(names)")
    }

    func testPlay_whenFileTruncated_endsWithEndReached() throws {
        let (result, names) = outcome(of: try TestMedia.truncated(from: SharedMedia.twoSecondWAV, keepingBytes: 1000))
        XCTAssertEqual(result, .endReached, "\(names)")
    }

    func testPlay_whenRandomBytes_endsWithEndReached() throws {
        let (result, names) = outcome(of: try TestMedia.randomBytes(count: 10_000))
        XCTAssertEqual(result, .endReached, "\(names)")
    }

    func testPlay_whenPathHasSpacesAndNonASCII_plays() throws {
        let (result, names) = outcome(of: try TestMedia.unicodePathWAV(seconds: 0.3))
        XCTAssertEqual(result, .endReached, "\(names)")
        XCTAssertTrue(names.contains("MediaPlayerPlaying"), "\(names)")
    }

    func testPlay_whenURLSchemeUnsupported_encountersError() throws {
        let (result, names) = outcome(of: URL(string: "nosuchscheme://example.invalid/a.wav")!)
        XCTAssertEqual(result, .encounteredError, "\(names)")
    }

    func testPlay_whenLocalPortClosed_encountersError() throws {
        let port = try LocalHTTPServer.closedPort()
        let (result, names) = outcome(of: URL(string: "http://127.0.0.1:\(port)/a.wav")!)
        XCTAssertEqual(result, .encounteredError, "\(names)")
    }

    func testPlay_whenHTTPServerDiesMidStream_endsWithEndReached() throws {
        let server = try LocalHTTPServer(serving: SharedMedia.twoSecondWAV, mode: .dieMidStream(afterBytes: 8000))
        defer { server.stop() }
        let (result, names) = outcome(of: server.url)
        XCTAssertEqual(result, .endReached, "\(names)")
        XCTAssertGreaterThanOrEqual(server.connectionCount, 1)
    }

    func testLibraryInit_whenArgumentsInvalid_throwsClearError() {
        XCTAssertThrowsError(try VLCLibrary(arguments: ["--this-option-does-not-exist-\(getpid())"])) { error in
            guard case VLCError.libraryInitializationFailed(let arguments, let reason)? = error as? VLCError else {
                return XCTFail("unexpected error \(error)")
            }
            XCTAssertEqual(arguments.count, 1)
            XCTAssertFalse(reason.isEmpty)
            XCTAssertTrue("\(error)".contains("this-option-does-not-exist"), "\(error)")
        }
    }

    /// The test drops its media while it plays: the player keeps it, playback reaches its
    /// end, and the media is torn down (completion) once the player lets go.
    func testPlay_whenMediaReleasedWhilePlaying_reachesEndThenTearsDown() {
        let log = EventLog<MediaPlayerEvent>()
        let mediaCompletions = Counter()
        runWithDeadline(40, "media released while playing") {
            var media: VLCMedia? = makeMedia(SharedMedia.twoSecondWAV)
            let mediaToken = media!.observe(onCompletion: { mediaCompletions.increment() }) { _ in }
            let player = VLCMediaPlayer(media: media!, library: TestLibrary.shared)
            let token = player.observe { log.record($0) }
            player.play()
            XCTAssertTrue(log.wait(for: .playing))
            media = nil
            XCTAssertEqual(log.wait(forAnyOf: [.endReached, .encounteredError]), .endReached, "\(log.names)")
            XCTAssertEqual(mediaCompletions.count, 0, "the player still holds the media")
            player.media = nil
            XCTAssertTrue(mediaCompletions.wait(forAtLeast: 1, timeout: 20), "media never torn down")
            token.cancel()
            mediaToken.cancel()
        }
        XCTAssertEqual(mediaCompletions.count, 1)
    }

    /// The last reference to a playing player is dropped: it stops and is torn down
    /// (completion, then freed) without a hang, and no error follows.
    func testPlay_whenPlayerReleasedWhilePlaying_tearsDown() {
        let log = EventLog<MediaPlayerEvent>()
        let completions = Counter()
        runWithDeadline(40, "player released while playing") {
            var player: VLCMediaPlayer? = VLCMediaPlayer(
                media: makeMedia(SharedMedia.twoSecondWAV), library: TestLibrary.shared)
            let weakPlayer = WeakBox(player!)
            let token = player!.observe(onCompletion: { completions.increment() }) { log.record($0) }
            player!.play()
            XCTAssertTrue(log.wait(for: .playing))
            player = nil
            XCTAssertTrue(completions.wait(forAtLeast: 1, timeout: 20))
            XCTAssertTrue(waitUntil(20) { weakPlayer.value == nil })
            XCTAssertFalse(token.isActive)
        }
        XCTAssertEqual(completions.count, 1)
        XCTAssertEqual(log.count(of: .encounteredError), 0)
    }
}
