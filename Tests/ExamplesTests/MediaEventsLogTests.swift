import Foundation
import Glibc
import TestSupport
import XCTest

/// `media-events log` run as a user would: the built binary on generated media.
final class MediaEventsLogTests: XCTestCase {
    /// The player's milestones, in the order libvlc sends them for a file that plays.
    private let milestones = [
        "MediaPlayerMediaChanged", "MediaPlayerOpening", "MediaPlayerPlaying",
        "MediaPlayerEndReached", "MediaPlayerStopped",
    ]

    func testLog_whenMediaOfSeveralFormats_printsJSONLinesInLibvlcOrder() throws {
        var inputs = [try TestMedia.wav(seconds: 0.5).path]
        for format in TestMedia.Format.allCases {
            inputs.append(try TestMedia.encoded(format, seconds: 0.5).path)
        }
        let result = try runProgram("media-events", ["log", "--json", "--no-progress"] + inputs)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        let lines = try result.jsonLines()
        XCTAssertEqual(lines.compactMap { $0["seq"] as? Int }, Array(1...lines.count), "seq numbers every line")
        let times = lines.compactMap { $0["t"] as? Double }
        XCTAssertEqual(times.count, lines.count)
        XCTAssertEqual(times, times.sorted(), "t never goes back")
        for line in lines {
            XCTAssertNotNil(line["source"] as? String)
            XCTAssertNotNil(line["event"] as? String)
            XCTAssertFalse(
                ["MediaPlayerTimeChanged", "MediaPlayerPositionChanged"].contains(line["event"] as? String),
                "--no-progress drops progress events")
        }
        for (index, input) in inputs.enumerated() {
            let item = lines.filter { $0["item"] as? Int == index + 1 }
            let names = item.filter { $0["source"] as? String == "player" }.compactMap { $0["event"] as? String }
            XCTAssertEqual(names.filter(milestones.contains).firstOccurrences(), milestones, input)
            XCTAssertTrue(
                item.contains { $0["event"] as? String == "MediaPlayerESAdded" && $0["type"] as? String == "audio" },
                "\(input): an audio track with its payload fields")
            let changed = item.first { $0["event"] as? String == "MediaPlayerMediaChanged" }
            XCTAssertEqual(changed?["mrl"] as? String, URL(fileURLWithPath: input).absoluteString)
            XCTAssertTrue(
                item.contains { $0["source"] as? String == "media" && $0["event"] as? String == "MediaStateChanged" },
                "\(input): the media's own events are logged too")
        }
        // Item 2 starts only after item 1 ended: the items do not interleave.
        let items = lines.compactMap { $0["item"] as? Int }
        XCTAssertEqual(items, items.sorted())
    }

    func testLog_whenEachDispatchMode_keepsEachSourcesOrder() throws {
        let wav = try TestMedia.wav(seconds: 0.5).path
        for mode in ["inline", "queue-async", "queue-sync"] {
            let result = try runProgram("media-events", ["log", "--json", "--no-progress", "--dispatch", mode, wav])
            XCTAssertEqual(result.status, 0, "\(mode): \(result.stderr)")
            let lines = try result.jsonLines()
            let player = lines.filter { $0["source"] as? String == "player" }.compactMap { $0["event"] as? String }
            XCTAssertEqual(player.filter(milestones.contains).firstOccurrences(), milestones, mode)
            let states = lines.filter { $0["event"] as? String == "MediaStateChanged" }.compactMap {
                $0["state"] as? String
            }
            XCTAssertEqual(Array(states.prefix(3)), ["opening", "playing", "ended"], mode)
        }
    }

    func testLog_whenNoMedia_playsTheBundledSample() throws {
        let result = try runProgram("media-events", ["log", "--no-progress"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdoutLines.contains { $0.contains("MediaPlayerEndReached") }, result.stdout)
        XCTAssertTrue(result.stdoutLines.contains { $0.contains("sample.wav") }, result.stdout)
    }

    func testLog_whenOnlyAndSummary_printsTheChosenEventsAndCounts() throws {
        let wav = try TestMedia.wav(seconds: 0.5).path
        let result = try runProgram(
            "media-events",
            [
                "log", "--json", "--only", "Playing,MediaPlayerEndReached",
                "--summary", "--repeat", "2", wav,
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let names = try result.jsonLines().compactMap { $0["event"] as? String }
        XCTAssertEqual(
            names, ["MediaPlayerPlaying", "MediaPlayerEndReached", "MediaPlayerPlaying", "MediaPlayerEndReached"])
        XCTAssertTrue(result.stderr.contains("summary: 2 played, 2 ok, 0 failed"), result.stderr)
        XCTAssertTrue(result.stderr.contains("MediaPlayerEndReached 2"), result.stderr)
    }

    /// Each bad input ends with the documented status and one stderr line naming it and
    /// saying why: libvlc's own error messages for an EncounteredError (what libvlc 3.0.24
    /// logs for each), the program's words where libvlc logged no error for the input.
    func testLog_whenBadInputs_exitsOneWithTheCauseAndNeverHangs() throws {
        let closed = try LocalHTTPServer.closedPort()
        let cases: [(input: String, message: String)] = [
            (try TestMedia.missing().path, "(No such file or directory)"),
            (try TestMedia.empty().path, "cannot pre fill buffer"),
            (try TestMedia.randomBytes(count: 64 * 1024).path, "no audio or video track"),
            ("foo://example/sound.wav", "VLC is unable to open the MRL 'foo://example/sound.wav'"),
            ("http://127.0.0.1:\(closed)/a.wav", "Connection refused"),
        ]
        for (input, message) in cases {
            let result = try runProgram("media-events", ["log", "--no-progress", input], timeout: 60)
            XCTAssertEqual(result.status, 1, "\(input): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, "\(input): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("media-events: \(input): "), result.stderr)
            XCTAssertTrue(result.stderr.contains(message), "\(input): \(result.stderr)")
        }
    }

    /// A stream cut short is, for libvlc, a stream that ended: documented as played (status 0).
    func testLog_whenServerClosesMidStream_endsWithoutHanging() throws {
        let wav = try TestMedia.wav(seconds: 2)
        let server = try LocalHTTPServer(serving: wav, mode: .dieMidStream(afterBytes: 20_000))
        let result = try runProgram(
            "media-events", ["log", "--json", "--no-progress", server.url.absoluteString],
            timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let names = try result.jsonLines().compactMap { $0["event"] as? String }
        XCTAssertTrue(names.contains("MediaPlayerEndReached"), "\(names)")
        XCTAssertGreaterThan(server.connectionCount, 0)
    }

    /// A collector gets everything from the stream itself: each line's UTC time, and each
    /// failure as a line with libvlc's words for it, beside the stderr line for people.
    func testLog_whenJSONAndAMediaFails_stampsEveryLineAndLogsTheFailureWithItsCause() throws {
        let missing = try TestMedia.missing()
        let wav = try TestMedia.wav(seconds: 0.3)
        let started = Date()
        let result = try runProgram("media-events", ["log", "--json", "--no-progress", wav.path, missing.path])
        XCTAssertEqual(result.status, 1, result.stderr)
        let lines = try result.jsonLines()
        let stamp = try NSRegularExpression(pattern: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#)
        for line in lines {
            let ts = try XCTUnwrap(line["ts"] as? String, "\(line)")
            XCTAssertEqual(stamp.numberOfMatches(in: ts, range: NSRange(ts.startIndex..., in: ts)), 1, ts)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = try XCTUnwrap(formatter.date(from: ts), ts)
            XCTAssertLessThan(abs(date.timeIntervalSince(started)), 120, "UTC, now: \(ts)")
        }
        let failures = lines.filter { $0["event"] as? String == "ItemFailed" }
        XCTAssertEqual(failures.count, 1, result.stdout)
        let failure = try XCTUnwrap(failures.first)
        XCTAssertEqual(failure["source"] as? String, "program")
        XCTAssertEqual(failure["item"] as? Int, 2)
        XCTAssertEqual(failure["mrl"] as? String, missing.absoluteString)
        XCTAssertEqual(failure["error"] as? String, "EncounteredError")
        let cause = try XCTUnwrap(failure["cause"] as? String, "\(failure)")
        XCTAssertTrue(cause.contains("(No such file or directory)"), cause)
        XCTAssertTrue(result.stderr.contains(cause), "the same words on stderr: \(result.stderr)")
        XCTAssertEqual(lines.last?["event"] as? String, "ItemFailed", "written once the media ended")
    }

    /// SIGINT and SIGTERM end the run at once with 128 + the signal, the JSON stream closed by
    /// an Interrupted line and the summary that was asked for.
    func testLog_whenInterrupted_printsTheSummaryAndExitsWithTheSignal() throws {
        let movie = try TestMedia.movie(seconds: 20)
        for (signal, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            let program = try RunningProgram(
                "media-events", ["log", "--json", "--summary", "--no-progress", movie.path])
            XCTAssertNotNil(
                program.waitForLine(timeout: 30) { $0.contains(#""event":"MediaPlayerPlaying""#) }, program.stderr)
            program.send(signal)
            let result = try program.finish(timeout: 30)
            XCTAssertEqual(result.status, 128 + signal, "\(name): \(result.stderr)")
            let last = try XCTUnwrap(try result.jsonLines().last)
            XCTAssertEqual(last["event"] as? String, "Interrupted", name)
            XCTAssertEqual(last["signal"] as? String, name)
            XCTAssertTrue(result.stderr.contains("summary: "), "\(name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("interrupted by \(name)"), result.stderr)
            XCTAssertTrue(result.stderr.contains("MediaPlayerPlaying 1"), result.stderr)
        }
    }

    /// `--progress-interval` keeps at most one progress event of each kind per interval:
    /// measured on the lines' own times. A movie plays in real time (its video clock paces it).
    func testLog_whenProgressInterval_keepsAtMostOneOfEachKindPerInterval() throws {
        let movie = try TestMedia.movie(seconds: 3)
        let everything = try runProgram("media-events", ["log", "--json", movie.path])
        XCTAssertEqual(everything.status, 0, everything.stderr)
        func times(_ lines: [[String: Any]], _ event: String) -> [Double] {
            lines.filter { $0["event"] as? String == event }.compactMap { $0["t"] as? Double }
        }
        let allTimes = times(try everything.jsonLines(), "MediaPlayerTimeChanged")
        let interval = 0.5
        let throttled = try runProgram(
            "media-events", ["log", "--json", "--progress-interval", "\(Int(interval * 1000))", movie.path])
        XCTAssertEqual(throttled.status, 0, throttled.stderr)
        let lines = try throttled.jsonLines()
        for event in ["MediaPlayerTimeChanged", "MediaPlayerPositionChanged"] {
            let kept = times(lines, event)
            XCTAssertGreaterThanOrEqual(kept.count, 2, "\(event): \(kept)")
            XCTAssertLessThan(kept.count, allTimes.count, "JSON's default keeps every one: \(allTimes.count)")
            for (earlier, later) in zip(kept, kept.dropFirst()) {
                // `t` is taken when the line is written, a little after the gate's own clock.
                XCTAssertGreaterThan(later - earlier, interval - 0.05, "\(event): \(kept)")
            }
        }
        XCTAssertTrue(
            lines.contains { $0["event"] as? String == "MediaPlayerEndReached" }, "other events are all there")

        let text = try runProgram("media-events", ["log", movie.path])
        let textTimes = text.stdoutLines.filter { $0.contains("MediaPlayerTimeChanged") }.count
        XCTAssertGreaterThan(textTimes, 0, text.stdout)
        XCTAssertLessThanOrEqual(textTimes, 5, "text: one a second by default, for a 3 s movie: \(text.stdout)")
    }

    /// libvlc repeats an unchanged length with every estimate of an MP3's; --no-progress
    /// keeps the first of each value only.
    func testLog_whenNoProgress_dropsRepeatedDurations() throws {
        let mp3 = try TestMedia.encoded(.mp3, seconds: 3)
        let all = try runProgram("media-events", ["log", "--json", mp3.path])
        XCTAssertEqual(all.status, 0, all.stderr)
        let lean = try runProgram("media-events", ["log", "--json", "--no-progress", mp3.path])
        XCTAssertEqual(lean.status, 0, lean.stderr)
        for (event, key) in [("MediaDurationChanged", "duration_ms"), ("MediaPlayerLengthChanged", "length_ms")] {
            let everyValue = try all.jsonLines().filter { $0["event"] as? String == event }.compactMap {
                $0[key] as? Int
            }
            XCTAssertGreaterThan(everyValue.count, Set(everyValue).count, "libvlc repeats \(event): \(everyValue)")
            let kept = try lean.jsonLines().filter { $0["event"] as? String == event }.compactMap { $0[key] as? Int }
            XCTAssertEqual(kept.count, kept.firstOccurrences().count, "\(event): no value twice in a row: \(kept)")
            XCTAssertEqual(Set(kept), Set(everyValue), "\(event): every value is still there")
        }
    }

    /// One line saying what is wrong and where the help is, not the whole help.
    func testLog_whenUsageError_exitsTwoWithOneLine() throws {
        let cases: [([String], String)] = [
            (["log", "--bogus"], "log "), (["log", "--dispatch", "sideways"], "log "),
            (["log", "--only", "NoSuchEvent"], "log "), (["log", "--only", ""], "log "),
            (["log", "--limit", "-1"], "log "), (["log", "--open-timeout", "0"], "log "),
            (["log", "--progress-interval", "soon"], "log "), (["probe", "--play", "-1", "x.wav"], "probe "),
            (["probe"], "probe "), (["events", "x"], "events "), (["frobnicate"], ""), ([], ""),
        ]
        for (arguments, command) in cases {
            let result = try runProgram("media-events", arguments, timeout: 30)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("media-events: "), "\(arguments): \(result.stderr)")
            XCTAssertTrue(
                result.stderr.hasSuffix("; try 'media-events \(command)--help'\n"), "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stdout, "")
        }
    }
}

extension Array where Element: Hashable {
    /// The elements in the order of their first occurrence.
    func firstOccurrences() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
