import MediaEvents
@testable import media_daemon
import XCTest

/// `PlayerFacts`, the daemon's record of what the player's events said, fed by hand the
/// sequences libvlc 3 sends around a seek (PlayerCallsTests shows the echo on the real
/// library; a CI run met the old time after it).
final class PlayerFactsTests: XCTestCase {
    private let playback = PlaybackID(rawValue: 1)

    /// A playback that plays, 30 s long, 300 ms in.
    private func playing() -> PlayerFacts {
        var facts = PlayerFacts()
        facts.began(playback, entry: nil)
        let opening: [MediaPlayerEvent] = [
            .lengthChanged(milliseconds: 30_000), .esAdded(type: .audio, id: 0), .playing,
            .timeChanged(milliseconds: 300),
        ]
        for event in opening {
            _ = facts.apply(event, playback: playback)
        }
        return facts
    }

    func testSeekByTime_whenTheEchoThenTheOldTimeArrive_restartsOnlyAtTheLandingWithItsTime() {
        var facts = playing()
        XCTAssertEqual(facts.seeking(to: 10_000, byTime: true), [])
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 10_000), playback: playback), [], "the setter's echo")
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 310), playback: playback), [], "the input's old time")
        XCTAssertEqual(facts.time, 310)
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 10_000), playback: playback), ["playback-restart"])
        XCTAssertEqual(facts.time, 10_000)
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 10_250), playback: playback), [], "one restart a seek")
    }

    func testSeekByTime_whenTheInputLandsNearButNotOnTheTarget_restartsThere() {
        var facts = playing()
        _ = facts.seeking(to: 10_000, byTime: true)
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 10_000), playback: playback), [])
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 9_600), playback: playback), ["playback-restart"])
    }

    func testSeekByTime_pastTheKnownLength_expectsNoEcho() {
        var facts = playing()
        _ = facts.seeking(to: 40_000, byTime: true)
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 40_000), playback: playback), ["playback-restart"])
    }

    func testSeekByPosition_hasNoEcho_theFirstTimeNearTheTargetIsTheLanding() {
        var facts = playing()
        XCTAssertEqual(facts.seeking(to: 15_000, byTime: false), [])
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 320), playback: playback), [])
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 15_000), playback: playback), ["playback-restart"])
    }

    func testSeek_ofAnEndedPlayback_isNotPending() {
        var facts = playing()
        facts.ended(playback)
        XCTAssertEqual(facts.seeking(to: 10_000, byTime: true), [])
        XCTAssertNil(facts.seekPending)
    }

    /// Paused, libvlc sends no time at all: the seek restarts at once at its target.
    func testSeek_whilePaused_restartsAtOnceWithTheTargetsTimeAndPosition() {
        var facts = playing()
        _ = facts.apply(.paused, playback: playback)
        XCTAssertEqual(facts.seeking(to: 12_000, byTime: true), ["playback-restart"])
        XCTAssertEqual(facts.time, 12_000)
        XCTAssertEqual(facts.position, 0.4, accuracy: 1e-9)
        XCTAssertNil(facts.seekPending)
        XCTAssertEqual(facts.seeking(to: nil, byTime: false), ["playback-restart"], "a target not known")
        XCTAssertEqual(facts.time, 12_000)
        // Playing again: the input's first report is its time, no second restart.
        _ = facts.apply(.playing, playback: playback)
        XCTAssertEqual(facts.apply(.timeChanged(milliseconds: 12_000), playback: playback), [])
    }
}
