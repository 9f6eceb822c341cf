import Foundation
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

    /// One line saying what is wrong and where the help is, not the whole help.
    func testLog_whenUsageError_exitsTwoWithOneLine() throws {
        let cases: [([String], String)] = [
            (["log", "--bogus"], "log "), (["log", "--dispatch", "sideways"], "log "),
            (["log", "--only", "NoSuchEvent"], "log "), (["log", "--only", ""], "log "),
            (["log", "--limit", "-1"], "log "), (["log", "--open-timeout", "0"], "log "),
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
