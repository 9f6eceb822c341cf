import Foundation
import TestSupport
import XCTest

/// The conventions of command-line tools: --version, help per command, short numbers,
/// fields left out when unknown, log numbering that survives a restart.
final class ConventionTests: XCTestCase {
    func testPrograms_whenVersion_printTheirsMediaEventsAndLibvlc() throws {
        for program in ["media-events", "media-daemon"] {
            let result = try runProgram(program, ["--version"], timeout: 30)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stdoutLines.count, 1, result.stdout)
            XCTAssertTrue(result.stdout.hasPrefix("\(program) (MediaEvents "), result.stdout)
            XCTAssertTrue(result.stdout.contains(", libvlc 3."), result.stdout)
        }
    }

    func testMediaEvents_whenCommandHelp_printsThatCommandsHelp() throws {
        let cases = [
            ("log", "--open-timeout SECONDS"), ("probe", "--timeout SECONDS"), ("events", "Lists the event names"),
            ("ctl", "--socket PATH"), ("replay", "--pace PACE"),
        ]
        for (command, option) in cases {
            let result = try runProgram("media-events", [command, "--help"], timeout: 30)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.hasPrefix("usage: media-events \(command)"), result.stdout)
            XCTAssertTrue(result.stdout.contains(option), result.stdout)
            XCTAssertEqual(result.stdout.components(separatedBy: "usage:").count, 2, "one command's help")
        }
    }

    /// Floats of libvlc's events are printed short (16.3), never as a Float widened to a
    /// Double (16.299999237060547).
    func testLog_whenJSON_printsFloatsShort() throws {
        let mp3 = try TestMedia.encoded(.mp3, seconds: 1)
        let result = try runProgram("media-events", ["log", "--json", mp3.path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let long = try NSRegularExpression(pattern: #"[0-9]\.[0-9]{7,}"#)
        let text = result.stdout
        let matches = long.matches(in: text, range: NSRange(text.startIndex..., in: text))
        XCTAssertEqual(matches.map { String(text[Range($0.range, in: text)!]) }, [])
        XCTAssertTrue(text.contains("\"percent\":"), "buffering events with their percent")
    }

    /// A Matroska file with a video track and a tagged audio track (ffmpeg).
    private func taggedVideo() throws -> URL {
        try TestMedia.ffmpeg(
            [
                "-f", "lavfi", "-i", "testsrc=duration=1:size=160x120:rate=25",
                "-f", "lavfi", "-i", "sine=duration=1", "-c:v", "mpeg4", "-c:a", "libvorbis",
                "-metadata:s:a:0", "language=fra", "-metadata:s:a:0", "title=Commentary",
            ],
            name: "tagged.mkv")
    }

    func testProbe_whenTracks_printsTrimmedCodecsTheirTagsAndUnknownFieldsAsNull() throws {
        let mp3 = try TestMedia.encoded(.mp3, seconds: 1)
        let video = try taggedVideo()
        let playlist = try TestMedia.m3u(entries: [mp3])
        let result = try runProgram(
            "media-events", ["probe", "--json", mp3.path, video.path, playlist.path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let reports = try result.jsonLines()
        XCTAssertEqual(reports.count, 3)
        let mp3Track = try XCTUnwrap((reports[0]["tracks"] as? [[String: Any]])?.first)
        XCTAssertEqual(mp3Track["codec_tag"] as? String, "mp3", "FourCC without its padding")
        XCTAssertEqual(mp3Track["codec_name"] as? String, "mp3")
        XCTAssertNotNil(mp3Track["codec_description"] as? String)
        let tracks = try XCTUnwrap(reports[1]["tracks"] as? [[String: Any]])
        let videoTrack = try XCTUnwrap(tracks.first { $0["type"] as? String == "video" })
        XCTAssertEqual(videoTrack["width"] as? Int, 160)
        XCTAssertEqual(videoTrack["height"] as? Int, 120)
        XCTAssertTrue(videoTrack["bit_rate"] is NSNull, "libvlc does not know it: null, not 0 (\(videoTrack))")
        let audioTrack = try XCTUnwrap(tracks.first { $0["type"] as? String == "audio" })
        XCTAssertEqual(audioTrack["language"] as? String, "fra")
        XCTAssertEqual(audioTrack["title"] as? String, "Commentary")
        XCTAssertTrue(reports[2]["duration_ms"] is NSNull, "a playlist has no duration of its own: null, not 0")
        for track in tracks + [mp3Track] {
            for key in ["bit_rate", "channels", "sample_rate", "width", "height"] {
                XCTAssertNotNil(track[key], "\(key) is always there (\(track))")
                XCTAssertNotEqual(track[key] as? Int, 0, "\(key) of 0 means unknown: null (\(track))")
            }
        }

        let text = try runProgram("media-events", ["probe", mp3.path, playlist.path], timeout: 60)
        XCTAssertTrue(text.stdout.contains("track:    audio #0 mp3 [mp3] ("), text.stdout)
        XCTAssertFalse(text.stdout.contains("duration: 0.000 s"), text.stdout)
    }

    func testDaemon_whenAppendingToItsLog_continuesSeqAndStampsEachLine() throws {
        let logFile = try TestMedia.directory(name: "logs").appendingPathComponent("daemon.log")
        let wav = try TestMedia.wav(seconds: 0.2).path
        for _ in 0..<2 {
            let result = try runProgram(
                "media-daemon", ["--exit-at-end", "--no-progress", "--log", logFile.path, wav],
                timeout: 30)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let lines = try String(contentsOf: logFile, encoding: .utf8).split(separator: "\n").map {
            try parseJSONObject(String($0))
        }
        XCTAssertEqual(lines.filter { $0["event"] as? String == "Started" }.count, 2)
        XCTAssertEqual(
            lines.compactMap { $0["seq"] as? Int }, Array(1...lines.count), "the second run goes on numbering")
        let stamp = try NSRegularExpression(pattern: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#)
        let now = Date()
        for line in lines {
            let ts = try XCTUnwrap(line["ts"] as? String, "every line has its wall-clock time: \(line)")
            XCTAssertEqual(stamp.numberOfMatches(in: ts, range: NSRange(ts.startIndex..., in: ts)), 1, ts)
            let date = try XCTUnwrap(ISO8601DateFormatter.withFractionalSeconds.date(from: ts))
            XCTAssertLessThan(abs(date.timeIntervalSince(now)), 120, "UTC, now: \(ts)")
        }
    }
}

private extension ISO8601DateFormatter {
    static var withFractionalSeconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
