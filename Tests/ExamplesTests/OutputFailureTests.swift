import Foundation
import TestSupport
import XCTest

/// Both programs on an output that goes away (`| head -3`) or fills up (/dev/full), as a
/// user's shell would give them.
final class OutputFailureTests: XCTestCase {
    /// A WAV that plays for a minute (audio plays in about real time here): without the fix
    /// the program runs to its end.
    private func longWAV() throws -> URL { try TestMedia.wav(seconds: 60, sampleRate: 8000, name: "long.wav") }

    func testLog_whenOutputPipeClosedEarly_exits141Promptly() throws {
        let (result, seconds) = try runClosingOutputEarly("media-events", ["log", try longWAV().path], afterLines: 3)
        XCTAssertEqual(result.status, 141, "EPIPE ends it like SIGPIPE would: \(result.stderr)")
        XCTAssertLessThan(seconds, 5, "exits at the first failed write, not at the end of the media")
        XCTAssertEqual(result.stderr, "", "a closed pipe is not an error worth a message")
    }

    func testDaemon_whenOutputPipeClosedEarly_exits141Promptly() throws {
        let (result, seconds) = try runClosingOutputEarly(
            "media-daemon", ["--loop", try longWAV().path], afterLines: 3)
        XCTAssertEqual(result.status, 141, result.stderr)
        XCTAssertLessThan(seconds, 5)
    }

    func testPrograms_whenOutputIsFull_exitOneWithOneLineNamingTheCause() throws {
        let wav = try TestMedia.wav(seconds: 0.3).path
        let runs: [(String, [String])] = [
            ("media-events", ["log", wav]), ("media-events", ["probe", wav]), ("media-events", ["--help"]),
            ("media-events", ["log", "--help"]), ("media-events", ["events"]), ("media-events", ["--version"]),
            ("media-daemon", [wav]), ("media-daemon", ["--help"]), ("media-daemon", ["--version"]),
        ]
        for (program, arguments) in runs {
            let full = try XCTUnwrap(FileHandle(forWritingAtPath: "/dev/full"))
            let result = try runProgram(program, arguments, timeout: 30, standardOutput: full)
            XCTAssertEqual(result.status, 1, "\(program) \(arguments): \(result.stderr)")
            XCTAssertEqual(
                result.stderrLines, ["\(program): cannot write to standard output: No space left on device"],
                "\(program) \(arguments)")
        }
        let daemon = try runProgram("media-daemon", ["--log", "/dev/full", wav], timeout: 30)
        XCTAssertEqual(daemon.status, 1, daemon.stderr)
        XCTAssertEqual(daemon.stderrLines, ["media-daemon: cannot write to /dev/full: No space left on device"])
    }
}
