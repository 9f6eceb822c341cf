import Foundation
import Glibc
import TestSupport
import XCTest

/// `media-events replay` run as a user would, on logs `media-events log --json` wrote: it prints
/// the lines the log printed, but for their times.
final class MediaEventsReplayTests: XCTestCase {
    /// A line without its times (`t`, and `ts` when there is one), as it is written.
    private func withoutTimes(_ line: String) -> String {
        line.replacingOccurrences(of: #""t":[0-9.]+,("ts":"[^"]*",)?"#, with: "", options: .regularExpression)
    }

    private func writeLog(_ result: ProgramResult, name: String = "log.jsonl") throws -> URL {
        let file = try TestMedia.directory(name: "replay").appendingPathComponent(name)
        try Data(result.stdout.utf8).write(to: file)
        return file
    }

    /// The movie (with its tracks, chapters and progress), a missing file (an ItemFailed line)
    /// and libvlc's error messages (LogMessage lines): the replay prints every line again, in
    /// order, byte for byte but for `t` and `ts`.
    func testReplay_whenGivenTheLogItCameFrom_printsTheSameLinesButTheirTimes() throws {
        let movie = try TestMedia.movie(seconds: 2, name: "replayed.mkv")
        let log = try runProgram(
            "media-events", ["log", "--json", "--log-level", "error", movie.path, try TestMedia.missing().path],
            timeout: 120)
        XCTAssertEqual(log.status, 1, "the missing file fails: \(log.stderr)")
        let events = Set(try log.jsonLines().compactMap { $0["event"] as? String })
        for event in ["MediaPlayerTimeChanged", "MediaPlayerESAdded", "MediaPlayerChapterChanged", "ItemFailed"] {
            XCTAssertTrue(events.contains(event), "\(event) is among the lines: \(events.sorted())")
        }
        let file = try writeLog(log)
        let replay = try runProgram("media-events", ["replay", "--json", file.path], timeout: 60)
        XCTAssertEqual(replay.status, 0, replay.stderr)
        XCTAssertEqual(replay.stderr, "")
        XCTAssertEqual(replay.stdoutLines.count, log.stdoutLines.count)
        XCTAssertEqual(replay.stdoutLines.map(withoutTimes), log.stdoutLines.map(withoutTimes))
        XCTAssertTrue(replay.stdoutLines.allSatisfy { $0.contains(#""ts":""#) }, "each line has its own ts")
    }

    /// The media daemon's log (its own lines, its list's and player's events, a failure) reads
    /// as a recording too, and replays as it was written, but for the times.
    func testReplay_whenGivenTheDaemonsLog_printsTheSameLinesButTheirTimes() throws {
        let logFile = try TestMedia.directory(name: "daemon-log").appendingPathComponent("daemon.log")
        let daemon = try runProgram(
            "media-daemon",
            [
                "--exit-at-end", "--log", logFile.path, try TestMedia.wav(seconds: 0.3).path,
                try TestMedia.missing().path,
            ],
            timeout: 60)
        XCTAssertEqual(daemon.status, 0, daemon.stderr)
        let written = try String(contentsOf: logFile, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(written.count, 10)
        let replay = try runProgram("media-events", ["replay", "--json", logFile.path], timeout: 60)
        XCTAssertEqual(replay.status, 0, replay.stderr)
        XCTAssertEqual(replay.stdoutLines.map(withoutTimes), written.map(withoutTimes))
    }

    /// With `--pace recorded` no line comes earlier than it did in the log; the text output is
    /// `log`'s text lines.
    func testReplay_whenRecordedPaceOrText_printsEachLineNoEarlierAndAsLogsTextSays() throws {
        let log = try runProgram(
            "media-events",
            ["log", "--json", try TestMedia.wav(seconds: 0.5).path, try TestMedia.wav(seconds: 0.5).path],
            timeout: 60)
        XCTAssertEqual(log.status, 0, log.stderr)
        let file = try writeLog(log)
        let paced = try runProgram("media-events", ["replay", "--json", "--pace", "recorded", file.path], timeout: 60)
        XCTAssertEqual(paced.status, 0, paced.stderr)
        XCTAssertEqual(paced.stdoutLines.map(withoutTimes), log.stdoutLines.map(withoutTimes))
        let recorded = try log.jsonLines().map { try XCTUnwrap($0["t"] as? Double) }
        let replayed = try paced.jsonLines().map { try XCTUnwrap($0["t"] as? Double) }
        for (index, (was, now)) in zip(recorded, replayed).enumerated() {
            XCTAssertGreaterThanOrEqual(now, was, "line \(index + 1) came \(was - now) s early")
        }

        let text = try runProgram("media-events", ["replay", file.path], timeout: 60)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertEqual(text.stdoutLines.count, log.stdoutLines.count)
        // `log`'s text line: the time, the source padded to 11, the name, then key=value for the
        // context and the payload in the JSON line's order (strings bare).
        let pair = try NSRegularExpression(pattern: #""([a-z_]+)":("((?:[^"\\]|\\.)*)"|[^,}]+)"#)
        for (line, json) in zip(text.stdoutLines, log.stdoutLines) {
            var fields: [String: String] = [:]
            var order: [String] = []
            for match in pair.matches(in: json, range: NSRange(json.startIndex..., in: json)) {
                let key = String(json[Range(match.range(at: 1), in: json)!])
                let value =
                    Range(match.range(at: 3), in: json).map { String(json[$0]) }
                    ?? String(json[Range(match.range(at: 2), in: json)!])
                fields[key] = value
                order.append(key)
            }
            let source = (fields["source"] ?? "").padding(toLength: 11, withPad: " ", startingAt: 0)
            let payload = order.filter { !["seq", "t", "ts", "source", "event"].contains($0) }
            let expected = "\(source) \(fields["event"] ?? "")" + payload.map { " \($0)=\(fields[$0] ?? "")" }.joined()
            // The time, then two spaces.
            XCTAssertEqual(String(line.drop { $0 == " " }.drop { $0 != " " }.dropFirst(2)), expected)
        }
    }

    /// `--convert` prints the log as a recording of the current version, which replays the same.
    func testReplay_whenConverted_isARecordingThatReplaysTheSame() throws {
        let log = try runProgram("media-events", ["log", "--json", try TestMedia.wav(seconds: 0.3).path], timeout: 60)
        let file = try writeLog(log)
        let converted = try runProgram("media-events", ["replay", "--convert", file.path], timeout: 60)
        XCTAssertEqual(converted.status, 0, converted.stderr)
        let header = try parseJSONObject(try XCTUnwrap(converted.stdoutLines.first))
        XCTAssertEqual(header["format"] as? String, "media-events-recording")
        XCTAssertEqual(header["version"] as? Int, 1)
        XCTAssertEqual((header["objects"] as? [[String: Any]])?.map { $0["source"] as? String }, ["player", "media"])
        XCTAssertEqual(converted.stdoutLines.count, log.stdoutLines.count + 1)
        let recording = try TestMedia.directory(name: "converted").appendingPathComponent("recording.jsonl")
        try Data(converted.stdout.utf8).write(to: recording)
        let replay = try runProgram("media-events", ["replay", "--json", recording.path], timeout: 60)
        XCTAssertEqual(replay.status, 0, replay.stderr)
        XCTAssertEqual(replay.stdoutLines.map(withoutTimes), log.stdoutLines.map(withoutTimes))
    }

    func testReplay_whenFileIsBrokenOrMissingOrArgumentsAreWrong_saysWhyAndExits() throws {
        let file = try TestMedia.directory(name: "broken").appendingPathComponent("broken.jsonl")
        try Data(
            #"{"seq":1,"t":0.1,"source":"player","event":"MediaPlayerPlaying","item":1}"#.utf8 + [10]
                + Data("{oops\n".utf8)
        )
        .write(to: file)
        let broken = try runProgram("media-events", ["replay", file.path], timeout: 30)
        XCTAssertEqual(broken.status, 1)
        XCTAssertTrue(broken.stderr.hasPrefix("media-events: \(file.path): line 2: not JSON"), broken.stderr)
        XCTAssertEqual(broken.stdout, "", "nothing is replayed from a file that does not read")
        let missing = try runProgram("media-events", ["replay", "/nonexistent/recording.jsonl"], timeout: 30)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.hasPrefix("media-events: /nonexistent/recording.jsonl: "), missing.stderr)
        for arguments in [
            ["replay"], ["replay", "a", "b"], ["replay", "--pace", "slow", "a"], ["replay", "--nope", "a"],
        ] {
            let usage = try runProgram("media-events", arguments, timeout: 30)
            XCTAssertEqual(usage.status, 2, "\(arguments)")
            XCTAssertTrue(usage.stderr.hasSuffix("try 'media-events replay --help'\n"), usage.stderr)
        }
    }
}
