import Foundation
import XCTest

/// `media-events probe` run as a user would.
final class MediaEventsProbeTests: XCTestCase {
    func testProbe_whenM3U_listsItsSubItems() throws {
        let entries = [try TestMedia.wav(seconds: 0.5, name: "one.wav"), try TestMedia.wav(seconds: 0.5, name: "two.wav"),
                       try TestMedia.encoded(.ogg, seconds: 0.5)]
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

    func testProbe_whenUnparseable_exitsOne() throws {
        for input in [try TestMedia.missing().path, try TestMedia.randomBytes(count: 4096).path] {
            let result = try runProgram("media-events", ["probe", input], timeout: 60)
            XCTAssertEqual(result.status, 1, "\(input): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("media-events: \(input): "), result.stderr)
        }
    }
}
