import Foundation
import Glibc
import TestSupport
import XCTest

/// Every JSON line the programs print validates against its schema in Schemas/, checked by a
/// real validator (python3-jsonschema, draft 2020-12).
final class JSONSchemaTests: XCTestCase {
    /// A run that prints every kind of line `log --json` has: the player's and the media's
    /// events with their payloads, progress, libvlc's log messages, playlist entries (nested
    /// ones with their path), passes, failures with and without a cause, and the Interrupted
    /// line of a SIGINT.
    func testLogJSON_whenEveryKindOfLine_validatesAgainstTheLogSchema() throws {
        let wav = try TestMedia.wav(seconds: 0.3)
        let inner = try TestMedia.m3u(entries: [wav, try TestMedia.missing()], name: "inner.m3u")
        let outer = try TestMedia.m3u(entries: [inner, try TestMedia.encoded(.ogg, seconds: 0.3)], name: "outer.m3u")
        let random = try TestMedia.randomBytes(count: 16 * 1024)
        let result = try runProgram(
            "media-events",
            ["log", "--json", "--log-level", "warning", "--repeat", "2", wav.path, outer.path, random.path],
            timeout: 120)
        XCTAssertEqual(result.status, 1, result.stderr)
        let lines = try result.jsonLines()
        XCTAssertTrue(lines.contains { $0["sub_item_path"] is [Int] }, "a nested entry is among them")
        XCTAssertTrue(lines.contains { $0["event"] as? String == "ItemFailed" && $0["cause"] is NSNull })
        XCTAssertTrue(lines.contains { $0["event"] as? String == "ItemFailed" && $0["cause"] is String })

        let movie = try TestMedia.movie(seconds: 20)
        let interrupted = try RunningProgram("media-events", ["log", "--json", "--verbose", movie.path])
        XCTAssertNotNil(interrupted.waitForLine(timeout: 30) { $0.contains(#""event":"MediaPlayerTimeChanged""#) })
        interrupted.send(SIGINT)
        let stopped = try interrupted.finish(timeout: 30)
        XCTAssertEqual(stopped.status, 130, stopped.stderr)
        XCTAssertEqual(try stopped.jsonLines().last?["event"] as? String, "Interrupted")

        let all = result.stdoutLines + stopped.stdoutLines
        let events = Set(try (lines + stopped.jsonLines()).compactMap { $0["event"] as? String })
        for event in [
            "MediaPlayerTimeChanged", "MediaPlayerESAdded", "MediaDurationChanged", "ItemFailed", "LogMessage",
            "MediaPlayerVout", "MediaPlayerChapterChanged",
        ] {
            XCTAssertTrue(events.contains(event), "\(event) is among the lines checked: \(events.sorted())")
        }
        XCTAssertEqual(try schemaViolations(of: all, schema: "log.schema.json"), [], "\(all.count) lines")
    }

    /// The check can fail: a line that breaks the schema is reported with what is wrong.
    func testSchemaValidator_whenLinesBreakTheirSchemas_reportsEachViolation() throws {
        let log = try runProgram(
            "media-events", ["log", "--json", "--only", "EndReached", try TestMedia.wav(seconds: 0.2).path])
        let line = try XCTUnwrap(log.stdoutLines.first)
        XCTAssertEqual(try schemaViolations(of: [line], schema: "log.schema.json"), [])
        var broken = try parseJSONObject(line)
        broken["ts"] = nil
        broken["item"] = "1"
        let brokenLine = String(decoding: try JSONSerialization.data(withJSONObject: broken), as: UTF8.self)
        let violations = try schemaViolations(of: [line, brokenLine], schema: "log.schema.json")
        XCTAssertEqual(violations.count, 2, "\(violations)")
        XCTAssertTrue(violations.allSatisfy { $0.hasPrefix("2: ") }, "\(violations)")

        let probe = try runProgram("media-events", ["probe", "--json", try TestMedia.wav(seconds: 0.2).path])
        let report = try XCTUnwrap(probe.stdoutLines.first)
        XCTAssertEqual(try schemaViolations(of: [report], schema: "probe.schema.json"), [])
        var missingKey = try parseJSONObject(report)
        missingKey["titles"] = nil
        let missingLine = String(decoding: try JSONSerialization.data(withJSONObject: missingKey), as: UTF8.self)
        XCTAssertEqual(try schemaViolations(of: [missingLine], schema: "probe.schema.json").count, 1)
    }

    /// The recordings kept with the tests (made by MediaEvents' recorder) and a log converted
    /// with `media-events replay --convert` (objects with context, marks) validate against the
    /// recording schema; a line of the wrong shape does not.
    func testRecordings_whenKeptOrConverted_validateAgainstTheRecordingSchema() throws {
        let kept = repositoryRoot.appendingPathComponent("Tests/MediaEventsTests/Recordings")
        let files = try FileManager.default.contentsOfDirectory(at: kept, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "jsonl" }
        XCTAssertEqual(files.count, 3, "\(files)")
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
            XCTAssertEqual(try schemaViolations(of: lines, schema: "recording.schema.json"), [], file.lastPathComponent)
        }
        let log = try runProgram(
            "media-events", ["log", "--json", try TestMedia.wav(seconds: 0.2).path, try TestMedia.missing().path])
        let logFile = try TestMedia.directory(name: "schema").appendingPathComponent("log.jsonl")
        try Data(log.stdout.utf8).write(to: logFile)
        let converted = try runProgram("media-events", ["replay", "--convert", logFile.path])
        XCTAssertEqual(converted.status, 0, converted.stderr)
        XCTAssertTrue(converted.stdout.contains(#""mark":"ItemFailed""#), "a mark is among the lines")
        XCTAssertEqual(try schemaViolations(of: converted.stdoutLines, schema: "recording.schema.json"), [])
        let wrong = [#"{"seq":1,"t":0.1,"object":1,"event":"MediaPlayerPlaying","call":"play"}"#]
        XCTAssertEqual(try schemaViolations(of: wrong, schema: "recording.schema.json").count, 1)
    }

    /// The probe's reports of a playlist, a failure and an invalid URL keep the schema too.
    func testProbeJSON_whenPlaylistOrFailure_validatesAgainstTheProbeSchema() throws {
        let playlist = try TestMedia.m3u(entries: [try TestMedia.wav(seconds: 0.2)])
        let inputs = [playlist.path, try TestMedia.missing().path, "http://[bad", try TestMedia.wav(seconds: 0.2).path]
        let result = try runProgram("media-events", ["probe", "--json"] + inputs, timeout: 120)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stdoutLines.count, inputs.count, "one report for every MEDIA: \(result.stdout)")
        XCTAssertEqual(try schemaViolations(of: result.stdoutLines, schema: "probe.schema.json"), [])
        let codes = try result.jsonLines().map { ($0["error"] as? [String: Any])?["code"] as? String }
        XCTAssertEqual(codes, [nil, "EncounteredError", "InvalidURL", nil])
        let parseOnly = try runProgram("media-events", ["probe", "--json", "--parse-only"] + inputs, timeout: 120)
        XCTAssertEqual(try schemaViolations(of: parseOnly.stdoutLines, schema: "probe.schema.json"), [])
    }
}
