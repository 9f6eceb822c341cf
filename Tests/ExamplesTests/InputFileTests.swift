import Foundation
import Glibc
import TestSupport
import XCTest

/// Files the programs are given that are not what they should be: a playlist that is not
/// text, a path that is not UTF-8.
final class InputFileTests: XCTestCase {
    func testDaemon_whenPlaylistIsNotText_refusesItWithOneLine() throws {
        let tooLong = try TestMedia.directory(name: "long").appendingPathComponent("long.m3u")
        try Data(String(repeating: "a.wav\n", count: 10_001).utf8).write(to: tooLong)
        let latin1 = try TestMedia.directory(name: "latin1").appendingPathComponent("latin1.m3u")
        try Data([0x63, 0x61, 0x66, 0xE9, 0x2E, 0x77, 0x61, 0x76, 0x0A]).write(to: latin1)  // "café.wav" in Latin-1
        let cases: [(URL, String)] = [
            (try TestMedia.wav(seconds: 0.5), "not a text playlist: it looks like RIFF (WAV, AVI) media"),
            (try TestMedia.encoded(.ogg, seconds: 0.5), "not a text playlist: it looks like Ogg media"),
            (try TestMedia.randomBytes(count: 8192), "not a text playlist: binary data"),
            (latin1, "not a text playlist: not UTF-8 text"),
            (tooLong, "more than 10000 entries"),
        ]
        for (file, reason) in cases {
            let result = try runProgram("media-daemon", ["--playlist", file.path, "--exit-at-end"], timeout: 30)
            XCTAssertEqual(result.status, 1, "\(file.lastPathComponent): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.hasPrefix("media-daemon: \(file.path): \(reason)"), result.stderr)
            XCTAssertEqual(result.stdout, "", "nothing played, nothing logged")
        }
    }

    /// A WAV named `bad\xff\xfe.wav` in a fresh directory; returns the directory.
    private func nonUTF8NamedWAV() throws -> URL {
        let directory = try TestMedia.directory(name: "raw")
        let path = Array(directory.path.utf8) + Array("/bad".utf8) + [0xFF, 0xFE] + Array(".wav".utf8)
        let fd = (path.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
            open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        }
        XCTAssertGreaterThanOrEqual(fd, 0)
        let data = TestMedia.wavData(seconds: 0.3)
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return directory
    }

    /// Runs the program in `directory` with `bad\xff\xfe.wav` as its last argument.
    private let withRawName = #"cd "$1" && shift && program="$0" && exec "$program" "$@" "$(printf 'bad\377\376.wav')""#

    func testPrograms_whenPathIsNotUTF8_playTheFileItNames() throws {
        let directory = try nonUTF8NamedWAV()
        let url = directory.absoluteString + "bad%FF%FE.wav"
        let log = try RunningProgram(
            "media-events", [directory.path, "log", "--json", "--no-progress"],
            shellScript: withRawName
        ).finish(timeout: 60)
        XCTAssertEqual(log.status, 0, log.stderr)
        let lines = try log.jsonLines()
        XCTAssertEqual(lines.first { $0["event"] as? String == "MediaPlayerMediaChanged" }?["mrl"] as? String, url)
        XCTAssertTrue(lines.contains { $0["event"] as? String == "MediaPlayerEndReached" }, log.stdout)

        let probe = try RunningProgram(
            "media-events", [directory.path, "probe", "--json"],
            shellScript: withRawName
        ).finish(timeout: 60)
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertEqual(try probe.jsonLines().first?["duration_ms"] as? Int, 300)

        let daemon = try RunningProgram(
            "media-daemon", [directory.path, "--exit-at-end", "--no-progress"],
            shellScript: withRawName
        ).finish(timeout: 60)
        XCTAssertEqual(daemon.status, 0, daemon.stderr)
        let ended = try daemon.jsonLines().first { $0["event"] as? String == "PlaylistEnded" }
        XCTAssertEqual(ended?["ended"] as? Int, 1, daemon.stdout)
        XCTAssertEqual(ended?["failed"] as? Int, 0, daemon.stdout)
    }
}
