import Foundation
import TestSupport
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
        XCTAssertEqual(track["codec_name"] as? String, "h264")
        XCTAssertEqual(track["width"] as? Int, 160)
        XCTAssertEqual(track["height"] as? Int, 120)
        XCTAssertEqual(track["frame_rate"] as? String, "25/1")
        XCTAssertEqual(track["pixel_format"] as? String, "yuv420p", "what -pix_fmt asked for")

        let text = try runProgram("media-events", ["probe", video.path], timeout: 60)
        XCTAssertTrue(text.stdout.contains(" 160x120 yuv420p 25 fps"), text.stdout)

        let ntsc = try TestMedia.h264(rate: "30000/1001", name: "ntsc.mp4")
        let ntscTracks = try XCTUnwrap(
            try runProgram("media-events", ["probe", "--json", ntsc.path], timeout: 60)
                .jsonLines().first?["tracks"] as? [[String: Any]])
        XCTAssertEqual(ntscTracks.first?["frame_rate"] as? String, "30000/1001", "a fraction, not 29.97")
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
        XCTAssertEqual(audio.map { $0["title"] as? String }, ["English", "Français"])

        let text = try runProgram("media-events", ["probe", movie.path], timeout: 60)
        XCTAssertTrue(text.stdout.contains("  chapter:  #0.1 at 1.000 s for 1.000 s \"Chapter 2\""), text.stdout)

        for option in ["--parse-only", "--no-chapters"] {
            let parseOnly = try runProgram("media-events", ["probe", "--json", option, movie.path], timeout: 60)
            XCTAssertEqual(parseOnly.status, 0, parseOnly.stderr)
            let report = try XCTUnwrap(try parseOnly.jsonLines().first)
            XCTAssertTrue(report["titles"] is NSNull, "\(option): not read, so null: \(report)")
            XCTAssertTrue((report["format"] as? [String: Any])?["name"] is NSNull, "\(option): \(report)")
        }
    }

    func testProbe_whenAudio_givesFrameRateAsNull() throws {
        let result = try runProgram(
            "media-events", ["probe", "--json", try TestMedia.wav(seconds: 0.5).path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let track = try XCTUnwrap((try result.jsonLines().first?["tracks"] as? [[String: Any]])?.first)
        XCTAssertTrue(track["frame_rate"] is NSNull, "\(track)")
        XCTAssertEqual(track["bits_per_sample"] as? Int, 16, "TestMedia.wav writes 16-bit PCM")
    }

    func testProbe_whenUnparseable_exitsOne() throws {
        for input in [try TestMedia.missing().path, try TestMedia.randomBytes(count: 4096).path] {
            let result = try runProgram("media-events", ["probe", input], timeout: 60)
            XCTAssertEqual(result.status, 1, "\(input): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("media-events: \(input): "), result.stderr)
        }
    }
}
