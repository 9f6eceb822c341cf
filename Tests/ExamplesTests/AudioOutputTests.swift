import Foundation
import TestSupport
import XCTest

/// `--audio` where libvlc can open no audio output (a headless machine: no sound card, no
/// PulseAudio server): the programs still play, and say once on stderr why there is no sound.
final class AudioOutputTests: XCTestCase {
    private static let warning = "no audio output could be opened ("

    /// What libvlc's own error log says about the audio output of one `log --audio` run: the
    /// decoder's `failed to create audio output` when it gave up, and the output modules'
    /// errors (object "audio output", a module other than main).
    private struct AudioLog {
        let decoderGaveUp: Bool
        let moduleErrors: [String]
    }

    private func audioLog(of result: ProgramResult) throws -> AudioLog {
        let messages = try result.jsonLines().filter { $0["event"] as? String == "LogMessage" }
        return AudioLog(
            decoderGaveUp: messages.contains {
                $0["object"] as? String == "decoder" && $0["text"] as? String == "failed to create audio output"
            },
            moduleErrors: messages.filter {
                $0["object"] as? String == "audio output" && ($0["module"] as? String).map { $0 != "main" } == true
            }.compactMap { $0["text"] as? String })
    }

    private func warnings(_ result: ProgramResult, program: String) -> [String] {
        result.stderrLines.filter { $0.hasPrefix("\(program): ") && $0.contains(Self.warning) }
    }

    func testLog_whenAudioCannotBeOpened_saysSoOnceAndExitsZero() throws {
        let wav = try TestMedia.wav(seconds: 0.3)
        // Two media: the decoder gives up on each, the warning is still printed once.
        let result = try runProgram(
            "media-events",
            [
                "log", "--audio", "--json", "--no-progress", "--log-level", "error",
                wav.path, wav.path,
            ], timeout: 60)
        XCTAssertEqual(result.status, 0, "played, without sound: \(result.stderr)")
        let log = try audioLog(of: result)
        let lines = warnings(result, program: "media-events")
        guard log.decoderGaveUp else {
            XCTAssertEqual(lines, [], "libvlc opened an audio output: nothing to warn of")
            throw XCTSkip("this machine opened an audio output; the warning cannot be seen here")
        }
        XCTAssertEqual(lines.count, 1, result.stderr)
        let line = try XCTUnwrap(lines.first)
        XCTAssertTrue(line.hasPrefix("media-events: no audio output could be opened ("), line)
        XCTAssertTrue(line.hasSuffix("); playing without sound"), line)
        XCTAssertFalse(log.moduleErrors.isEmpty, "libvlc's output modules said why")
        for text in log.moduleErrors {
            XCTAssertTrue(line.contains(text), "the cause in libvlc's words (\(text)): \(line)")
        }
    }

    func testLog_whenNoAudioOption_saysNothingOfAudio() throws {
        let result = try runProgram(
            "media-events", ["log", "--no-progress", try TestMedia.wav(seconds: 0.3).path],
            timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "", "the dummy output always opens")
    }

    func testDaemon_whenAudioCannotBeOpened_saysSoOnce() throws {
        let wav = try TestMedia.wav(seconds: 0.3)
        let probe = try runProgram(
            "media-events",
            [
                "log", "--audio", "--json", "--no-progress", "--log-level", "error",
                wav.path,
            ], timeout: 60)
        let decoderGaveUp = try audioLog(of: probe).decoderGaveUp
        let result = try runProgram(
            "media-daemon", ["--exit-at-end", "--no-progress", "--audio", wav.path, wav.path],
            timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = warnings(result, program: "media-daemon")
        guard decoderGaveUp else {
            XCTAssertEqual(lines, [], "libvlc opened an audio output: nothing to warn of")
            throw XCTSkip("this machine opened an audio output; the warning cannot be seen here")
        }
        XCTAssertEqual(lines.count, 1, result.stderr)
        XCTAssertTrue(lines.first?.hasSuffix("); playing without sound") == true, result.stderr)

        let silent = try runProgram("media-daemon", ["--exit-at-end", "--no-progress", wav.path], timeout: 60)
        XCTAssertEqual(silent.status, 0, silent.stderr)
        XCTAssertEqual(warnings(silent, program: "media-daemon"), [])
    }
}
