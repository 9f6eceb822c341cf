import Foundation
import TestSupport
import XCTest

/// `--verbose` and `--log-level` of `media-events log` and `media-daemon`, run as a user would:
/// libvlc's own messages as lines of source `libvlc`, none by default.
final class LibvlcLogOptionTests: XCTestCase {
    private func libvlcLines(_ lines: [[String: Any]]) -> [[String: Any]] {
        lines.filter { $0["source"] as? String == "libvlc" }
    }

    func testLog_whenVerbose_printsLibvlcMessagesAndNoneWithout() throws {
        let wav = try TestMedia.wav(seconds: 0.3).path
        let verbose = try runProgram("media-events", ["log", "--json", "--no-progress", "--verbose", wav], timeout: 60)
        XCTAssertEqual(verbose.status, 0, verbose.stderr)
        let lines = try verbose.jsonLines()
        let messages = libvlcLines(lines)
        XCTAssertFalse(messages.isEmpty, "libvlc's messages with --verbose:\n\(verbose.stdout)")
        for message in messages {
            XCTAssertEqual(message["event"] as? String, "LogMessage")
            XCTAssertTrue(
                ["debug", "notice", "warning", "error"].contains(message["level"] as? String ?? ""), "\(message)")
            XCTAssertNotNil(message["object"] as? String, "\(message)")
            XCTAssertNotNil(message["text"] as? String, "\(message)")
        }
        XCTAssertTrue(
            messages.contains { $0["level"] as? String == "debug" && $0["module"] != nil },
            "--verbose is every level, debug included")
        XCTAssertEqual(lines.compactMap { $0["seq"] as? Int }, Array(1..<lines.count + 1), "numbered with the events")
        XCTAssertTrue(
            lines.contains { $0["event"] as? String == "MediaPlayerEndReached" }, "the events are still there")

        let text = try runProgram("media-events", ["log", "--no-progress", "--verbose", wav], timeout: 60)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdoutLines.contains { $0.contains(" libvlc      LogMessage level=debug ") }, text.stdout)

        let quiet = try runProgram("media-events", ["log", "--json", "--no-progress", wav], timeout: 60)
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(libvlcLines(try quiet.jsonLines()).count, 0, "no libvlc lines by default:\n\(quiet.stdout)")
    }

    func testLog_whenLogLevelError_printsOnlyErrorMessages() throws {
        let missing = try TestMedia.missing()
        let result = try runProgram(
            "media-events", ["log", "--json", "--no-progress", "--log-level", "error", missing.path],
            timeout: 60)
        XCTAssertEqual(result.status, 1, result.stderr)
        let lines = try result.jsonLines()
        let messages = libvlcLines(lines)
        XCTAssertEqual(messages.compactMap { $0["level"] as? String }.firstOccurrences(), ["error"], result.stdout)
        XCTAssertTrue(
            messages.contains {
                $0["module"] as? String == "filesystem"
                    && ($0["text"] as? String ?? "")
                        .contains("cannot open file \(missing.path) (No such file or directory)")
            }, result.stdout)
        // In the order received: the input's errors come before the player's EncounteredError.
        let errorIndex = lines.firstIndex { $0["event"] as? String == "MediaPlayerEncounteredError" }
        let messageIndex = lines.firstIndex { $0["source"] as? String == "libvlc" }
        XCTAssertNotNil(errorIndex)
        XCTAssertLessThan(messageIndex ?? Int.max, errorIndex ?? Int.min, result.stdout)

        let usage = try runProgram("media-events", ["log", "--log-level", "loud"], timeout: 30)
        XCTAssertEqual(usage.status, 2, usage.stderr)
        XCTAssertEqual(usage.stderrLines.count, 1, usage.stderr)
    }

    func testDaemon_whenVerboseOrLogLevel_logsLibvlcMessagesAsJSONLines() throws {
        let wav = try TestMedia.wav(seconds: 0.3).path
        let verbose = try runProgram("media-daemon", ["--verbose", "--no-progress", "--exit-at-end", wav], timeout: 60)
        XCTAssertEqual(verbose.status, 0, verbose.stderr)
        let messages = libvlcLines(try verbose.jsonLines())
        XCTAssertTrue(
            messages.contains {
                $0["level"] as? String == "debug" && $0["event"] as? String == "LogMessage"
                    && $0["object"] is String && $0["text"] is String && $0["ts"] is String
            }, verbose.stdout)

        let missing = try TestMedia.missing()
        let errors = try runProgram(
            "media-daemon", ["--log-level", "error", "--no-progress", "--exit-at-end", missing.path],
            timeout: 60)
        XCTAssertEqual(errors.status, 0, errors.stderr)
        let lines = try errors.jsonLines()
        let levels = libvlcLines(lines).compactMap { $0["level"] as? String }
        XCTAssertFalse(levels.isEmpty, errors.stdout)
        XCTAssertEqual(Set(levels), ["error"], errors.stdout)
        let failed = lines.first { $0["event"] as? String == "PlaybackEnded" && $0["reason"] as? String == "failed" }
        XCTAssertTrue((failed?["cause"] as? String ?? "").contains("(No such file or directory)"), errors.stdout)

        let quiet = try runProgram("media-daemon", ["--no-progress", "--exit-at-end", missing.path], timeout: 60)
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(libvlcLines(try quiet.jsonLines()).count, 0, quiet.stdout)
    }
}
