import Foundation
import TestSupport
import XCTest

/// `media-events log` on inputs that are not one playable file: a source that stalls, a
/// playlist, a directory.
final class MediaEventsLogInputTests: XCTestCase {
    func testLog_whenSourceStalls_failsAtTheOpenTimeout() throws {
        let server = try StalledServer()
        let start = Date()
        let program = try RunningProgram("media-events", ["log", "--no-progress", "--open-timeout", "2", server.url])
        // The upper bound counts from the opening (when the timeout starts), not from the
        // launch, which a sanitized build makes seconds longer.
        XCTAssertNotNil(program.waitForLine(timeout: 30) { $0.contains("MediaPlayerOpening") }, program.stdout)
        let opened = Date()
        let result = try program.finish(timeout: 30)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(
            result.stderrLines, ["media-events: \(server.url): still not playing after 2 s (--open-timeout)"])
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 2)
        XCTAssertLessThan(Date().timeIntervalSince(opened), 10, "the stalled media is stopped at the timeout")
        XCTAssertFalse(result.stdout.contains("MediaPlayerPlaying"), result.stdout)
    }

    func testLog_whenSourceStallsWithoutOption_failsAfterTheDefault30Seconds() throws {
        let server = try StalledServer()
        let start = Date()
        let program = try RunningProgram("media-events", ["log", "--no-progress", server.url])
        XCTAssertNotNil(program.waitForLine(timeout: 30) { $0.contains("MediaPlayerOpening") }, program.stdout)
        let opened = Date()
        let result = try program.finish(timeout: 60)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("still not playing after 30 s (--open-timeout)"), result.stderr)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 30)
        XCTAssertLessThan(Date().timeIntervalSince(opened), 40)
    }

    /// `--limit` stops a media; one that never started playing was not played.
    func testLog_whenLimitIsUpBeforePlaying_exitsOne() throws {
        let server = try StalledServer()
        let result = try runProgram("media-events", ["log", "--no-progress", "--limit", "1", server.url], timeout: 30)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(
            result.stderrLines,
            ["media-events: \(server.url): not playing yet when the 1 s --limit was up: nothing was played"])
        let played = try runProgram(
            "media-events",
            [
                "log", "--no-progress", "--limit", "1",
                try TestMedia.wav(seconds: 5).path,
            ], timeout: 30)
        XCTAssertEqual(played.status, 0, "a media playing at the limit counts as played: \(played.stderr)")
    }

    func testLog_whenPlaylistAndDirectory_playsTheirEntries() throws {
        let listed = [
            try TestMedia.wav(seconds: 0.3, name: "one.wav"), try TestMedia.wav(seconds: 0.3, name: "two.wav"),
        ]
        let playlist = try TestMedia.m3u(entries: listed)
        let directory = try TestMedia.directory(name: "songs")
        for name in ["a.wav", "b.wav"] {
            try TestMedia.wavData(seconds: 0.3).write(to: directory.appendingPathComponent(name))
        }
        let result = try runProgram(
            "media-events", ["log", "--json", "--no-progress", playlist.path, directory.path],
            timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        let lines = try result.jsonLines()
        func played(item: Int) -> [Int: String] {
            var mrls: [Int: String] = [:]
            for line in lines
            where line["item"] as? Int == item && line["event"] as? String == "MediaPlayerMediaChanged" {
                if let sub = line["sub_item"] as? Int { mrls[sub] = line["mrl"] as? String }
            }
            return mrls
        }
        XCTAssertEqual(played(item: 1), [1: listed[0].absoluteString, 2: listed[1].absoluteString])
        XCTAssertEqual(
            played(item: 2),
            [
                1: directory.appendingPathComponent("a.wav").absoluteString,
                2: directory.appendingPathComponent("b.wav").absoluteString,
            ])
        let ends = lines.filter { $0["event"] as? String == "MediaPlayerEndReached" && $0["sub_item"] != nil }
        XCTAssertEqual(ends.count, 4, "every entry is played to its end")
        XCTAssertEqual(
            lines.filter { $0["event"] as? String == "MediaPlayerESAdded" && $0["sub_item"] != nil }.count, 4,
            "with its audio track")

        for mode in ["queue-async", "queue-sync"] {
            let queued = try runProgram(
                "media-events", ["log", "--json", "--no-progress", "--dispatch", mode, playlist.path],
                timeout: 60)
            XCTAssertEqual(queued.status, 0, "\(mode): \(queued.stderr)")
            let entries = try queued.jsonLines().compactMap { $0["sub_item"] as? Int }
            XCTAssertEqual(entries, entries.sorted(), "\(mode): an entry's lines come after the previous entry's")
            XCTAssertEqual(Set(entries), [1, 2], mode)
        }

        let empty = try runProgram("media-events", ["log", try TestMedia.directory(name: "nothing").path], timeout: 30)
        XCTAssertEqual(empty.status, 1, "an empty directory plays nothing: \(empty.stderr)")
        XCTAssertTrue(empty.stderr.contains("no audio or video track found"), empty.stderr)
    }

    func testLog_whenAnEntryFailsOrNestingIsTooDeep_exitsOneNamingTheEntry() throws {
        let missing = try TestMedia.missing()
        let playlist = try TestMedia.m3u(entries: [missing, try TestMedia.wav(seconds: 0.2)])
        let result = try runProgram("media-events", ["log", "--no-progress", playlist.path], timeout: 60)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(
            result.stderr.hasPrefix(
                "media-events: \(playlist.path) entry 1 (\(missing.absoluteString)): "
                    + "cannot open file \(missing.path) (No such file or directory)"), result.stderr)
        XCTAssertTrue(result.stdout.contains("MediaPlayerEndReached item=1 sub_item=2"), "the next entry is played")

        var deep = try TestMedia.directory(name: "deep")
        let top = deep
        for level in 1...9 { deep.appendPathComponent("\(level)", isDirectory: true) }
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        try TestMedia.wavData(seconds: 0.2).write(to: deep.appendingPathComponent("x.wav"))
        let nested = try runProgram("media-events", ["log", "--no-progress", top.path], timeout: 60)
        XCTAssertEqual(nested.status, 1, nested.stderr)
        XCTAssertEqual(nested.stderrLines.count, 1, nested.stderr)
        XCTAssertTrue(nested.stderr.hasSuffix("entries not played: playlists nested more than 8 deep\n"), nested.stderr)
    }
}
