import Foundation
import XCTest

/// `media-events probe` run as a user would.
final class MediaEventsProbeTests: XCTestCase {
    func testProbe_whenM3U_listsItsSubItems() throws {
        let entries = [
            try TestMedia.wav(seconds: 0.5, name: "one.wav"), try TestMedia.wav(seconds: 0.5, name: "two.wav"),
            try TestMedia.encoded(.ogg, seconds: 0.5),
        ]
        let playlist = try TestMedia.m3u(entries: entries)
        let result = try runProgram("media-events", ["probe", "--json", playlist.path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let reports = try result.jsonLines()
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?["status"] as? String, "done")
        XCTAssertEqual(reports.first?["sub_items"] as? [String], entries.map(\.absoluteString))
    }

    func testProbe_whenWAV_printsDurationAndTrack() throws {
        let wav = try TestMedia.wav(seconds: 1.5)
        let result = try runProgram("media-events", ["probe", wav.path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("duration: 1.500 s"), result.stdout)
        XCTAssertTrue(result.stdout.contains("track:    "), result.stdout)
    }

    func testProbe_whenVideo_printsItsSizeAndFrameRate() throws {
        let video = try TestMedia.h264(size: "160x120", rate: "25")
        let result = try runProgram("media-events", ["probe", "--json", video.path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let tracks = try XCTUnwrap(try result.jsonLines().first?["tracks"] as? [[String: Any]])
        let track = try XCTUnwrap(tracks.first { $0["type"] as? String == "video" }, "\(tracks)")
        XCTAssertEqual(track["codec"] as? String, "h264")
        XCTAssertEqual(track["width"] as? Int, 160)
        XCTAssertEqual(track["height"] as? Int, 120)
        XCTAssertEqual(track["frame_rate"] as? Double, 25)
        XCTAssertTrue(
            result.stdout.contains("\"frame_rate\":25}") || result.stdout.contains("\"frame_rate\":25,"),
            "a whole rate prints as 25, not 25.0: \(result.stdout)")

        let text = try runProgram("media-events", ["probe", video.path], timeout: 60)
        XCTAssertTrue(text.stdout.contains(" 160x120 25 fps"), text.stdout)

        let ntsc = try TestMedia.h264(rate: "30000/1001", name: "ntsc.mp4")
        let ntscTracks = try XCTUnwrap(
            try runProgram("media-events", ["probe", "--json", ntsc.path], timeout: 60)
                .jsonLines().first?["tracks"] as? [[String: Any]])
        XCTAssertEqual(ntscTracks.first?["frame_rate"] as? Double, 29.97, "30000/1001, short")
    }

    func testProbe_whenMovieHasChapters_printsTitlesChaptersAndTrackLanguages() throws {
        let movie = try TestMedia.movie(seconds: 3)
        let result = try runProgram("media-events", ["probe", "--json", movie.path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try XCTUnwrap(try result.jsonLines().first)
        let titles = try XCTUnwrap(report["titles"] as? [[String: Any]], "\(report)")
        XCTAssertEqual(titles.count, 1)
        let chapters = try XCTUnwrap(titles.first?["chapters"] as? [[String: Any]])
        XCTAssertEqual(chapters.map { $0["name"] as? String }, ["Chapter 1", "Chapter 2", "Chapter 3"])
        XCTAssertEqual(chapters.map { $0["offset_ms"] as? Int }, [0, 1000, 2000])
        let tracks = try XCTUnwrap(report["tracks"] as? [[String: Any]])
        let audio = tracks.filter { $0["type"] as? String == "audio" }
        XCTAssertEqual(audio.map { $0["language"] as? String }, ["eng", "fra"])
        XCTAssertEqual(audio.map { $0["description"] as? String }, ["English", "Français"])

        let text = try runProgram("media-events", ["probe", movie.path], timeout: 60)
        XCTAssertTrue(text.stdout.contains("  chapter:  #0.1 at 1.000 s for 1.000 s \"Chapter 2\""), text.stdout)

        let parseOnly = try runProgram("media-events", ["probe", "--json", "--no-chapters", movie.path], timeout: 60)
        XCTAssertEqual(parseOnly.status, 0, parseOnly.stderr)
        XCTAssertFalse(parseOnly.stdout.contains("\"titles\""), parseOnly.stdout)
    }

    func testProbe_whenAudio_leavesFrameRateOut() throws {
        let result = try runProgram(
            "media-events", ["probe", "--json", try TestMedia.wav(seconds: 0.5).path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stdout.contains("frame_rate"), result.stdout)
    }

    func testProbe_whenUnparseable_exitsOne() throws {
        for input in [try TestMedia.missing().path, try TestMedia.randomBytes(count: 4096).path] {
            let result = try runProgram("media-events", ["probe", input], timeout: 60)
            XCTAssertEqual(result.status, 1, "\(input): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("media-events: \(input): "), result.stderr)
        }
    }
}
