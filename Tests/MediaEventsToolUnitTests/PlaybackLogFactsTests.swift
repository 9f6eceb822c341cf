import MediaEvents
@testable import media_events
import XCTest

/// `PlaybackLogFacts` from libvlc 3.0's own debug messages (texts copied from a probe's log of
/// a 24-bit FLAC): each fact from its one message, and whether an audio decoder that was
/// loaded got any sample to the audio output, which decides whether the probe plays again.
final class PlaybackLogFactsTests: XCTestCase {
    private func message(_ objectType: String, _ module: String, _ text: String) -> LogMessage {
        LogMessage(level: .debug, text: text, module: module, objectType: objectType)
    }

    private var demuxer: LogMessage { message("demux", "main", "using demux module \"flacsys\"") }
    private var decoderLoaded: LogMessage { message("decoder", "main", "using audio decoder module \"flac\"") }
    private var streamInfo: LogMessage {
        message("decoder", "flac", "channels:2 samplerate:44100 bitspersamples:24")
    }
    private var audioOutputInput: LogMessage {
        message("audio output", "main", "input 's32l' 44100 Hz Stereo frame=1 samples/8 bytes")
    }

    func testDecodedFLAC_givesDemuxerAndBitDepth_andAudioReachedTheOutput() {
        let facts = PlaybackLogFacts([demuxer, decoderLoaded, streamInfo, audioOutputInput])
        XCTAssertEqual(facts.demuxer, "flacsys")
        XCTAssertEqual(facts.bitsPerSample, 24)
        XCTAssertTrue(facts.audioDecoderLoaded)
        XCTAssertTrue(facts.audioDecoded)
        XCTAssertFalse(facts.audioDecoderOutputNothing)
    }

    func testDecoderLoadedButNothingReachedTheOutput_isTheCaseThatPlaysAgain() {
        let facts = PlaybackLogFacts([demuxer, decoderLoaded])
        XCTAssertEqual(facts.demuxer, "flacsys")
        XCTAssertNil(facts.bitsPerSample)
        XCTAssertTrue(facts.audioDecoderOutputNothing)
    }

    func testNoAudioDecoder_isNotACaseForPlayingAgain() {
        // A video-only input, or one whose codec has no decoder: playing again changes nothing.
        let facts = PlaybackLogFacts([
            demuxer, message("decoder", "main", "using video decoder module \"avcodec\""),
        ])
        XCTAssertFalse(facts.audioDecoderLoaded)
        XCTAssertFalse(facts.audioDecoderOutputNothing)
    }

    func testMessagesOfOtherObjectsOrModules_areNotTakenForTheFacts() {
        let facts = PlaybackLogFacts([
            message("input", "main", "using audio decoder module \"flac\""),
            message("decoder", "avcodec", "channels:2 samplerate:44100 bitspersamples:16"),
            message("generic", "main", "input 's32l' 44100 Hz Stereo frame=1 samples/8 bytes"),
        ])
        XCTAssertEqual(facts, PlaybackLogFacts())
    }
}

/// When the probe plays a media a second time: only where that can give the decoder's facts.
final class ProbePlaysAgainTests: XCTestCase {
    private func playback(played: Bool = true, timedOut: Bool = false, decoded: Bool) -> ProbePlayback {
        var playback = ProbePlayback()
        playback.played = played
        playback.windowTimedOut = timedOut
        playback.facts.audioDecoderLoaded = true
        playback.facts.audioDecoded = decoded
        return playback
    }

    func testNothingDecodedInAWindowThatEndedByItself_playsAgain() {
        XCTAssertTrue(ProbeCommand.playsAgain(playback(decoded: false), windowMs: 1000))
    }

    func testDecodedAudio_doesNotPlayAgain() {
        XCTAssertFalse(ProbeCommand.playsAgain(playback(decoded: true), windowMs: 1000))
    }

    func testAnEmptyWindowATimeoutOrNoPlayback_doNotPlayAgain() {
        XCTAssertFalse(ProbeCommand.playsAgain(playback(decoded: false), windowMs: 0), "--play 0")
        XCTAssertFalse(ProbeCommand.playsAgain(playback(timedOut: true, decoded: false), windowMs: 1000))
        XCTAssertFalse(ProbeCommand.playsAgain(playback(played: false, decoded: false), windowMs: 1000))
    }
}
