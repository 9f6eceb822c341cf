import Foundation
import Glibc
import XCTest

/// `media-daemon` run as a user would: a child process, signals, its JSON Lines log.
final class MediaDaemonTests: XCTestCase {
    private func event(_ line: String) -> String? { (try? parseJSONObject(line))?["event"] as? String }

    func testDaemon_whenBrokenItemsThenAGoodOne_playsItReloadsAndExitsZero() throws {
        let good = try TestMedia.wav(seconds: 0.5, name: "good.wav")
        let playlist = try TestMedia.m3u(entries: [
            try TestMedia.missing(), try TestMedia.empty(), try TestMedia.randomBytes(count: 8192),
            URL(string: "foo://nowhere/x.wav")!, good,
        ])
        let daemon = try RunningProgram("media-daemon", ["--playlist", playlist.path, "--no-progress"])

        let ended = daemon.waitForLine(timeout: 60) { self.event($0) == "PlaylistEnded" }
        XCTAssertNotNil(ended, "the playlist ends despite its broken items:\n\(daemon.stdout)\n\(daemon.stderr)")
        let lines = try daemon.stdoutLines.map(parseJSONObject)
        let goodEnd = lines.first { $0["event"] as? String == "MediaPlayerEndReached" && $0["item"] as? Int == 5 }
        XCTAssertEqual(goodEnd?["entry"] as? String, good.absoluteString, "the good item is played to its end")
        let failures = lines.filter { $0["event"] as? String == "ItemFailed" }
        XCTAssertEqual(
            failures.compactMap { $0["item"] as? Int }, [1, 2, 3, 4],
            "missing, empty, random bytes (no track) and the unknown scheme fail")
        XCTAssertEqual(
            failures.compactMap { $0["error"] as? String },
            ["EncounteredError", "EncounteredError", "NoTracks", "EncounteredError"])
        XCTAssertTrue(failures.allSatisfy { $0["message"] is String }, "\(failures)")
        // libvlc's own words, from the error messages logged on each item's input thread.
        let causes = failures.map { $0["cause"] as? String }
        if causes.count == 4 {
            XCTAssertTrue(causes[0]?.contains("No such file or directory") == true, "missing: \(failures[0])")
            XCTAssertTrue(causes[1]?.contains("cannot pre fill buffer") == true, "empty: \(failures[1])")
            XCTAssertNil(failures[2]["cause"], "NoTracks keeps the program's words, no key: \(failures[2])")
            XCTAssertTrue(
                causes[3]?.contains("unable to open the MRL 'foo://nowhere/x.wav'") == true,
                "unknown scheme: \(failures[3])")
        }
        XCTAssertTrue(lines.allSatisfy { $0["source"] as? String != "libvlc" }, "no libvlc lines without --verbose")
        for changed in lines where changed["event"] as? String == "MediaPlayerMediaChanged" {
            let entry = try XCTUnwrap(changed["entry"] as? String, "MediaChanged names its item: \(changed)")
            let url = entry.contains("://") ? entry : URL(fileURLWithPath: entry).absoluteString
            XCTAssertEqual(changed["mrl"] as? String, url, "the new item's, not the previous one's")
        }

        daemon.send(SIGUSR1)
        let status = daemon.waitForLine(timeout: 30) { self.event($0) == "Status" }
        XCTAssertNotNil(status)
        let statusFields = try status.map(parseJSONObject)
        XCTAssertEqual(statusFields?["failed"] as? Int, 4)
        XCTAssertEqual(statusFields?["item"] as? Int, 5)
        XCTAssertNil(statusFields?["time_ms"], "no time once the playlist ended (not -1)")

        let before = daemon.stdoutLines.count
        daemon.send(SIGHUP)
        XCTAssertNotNil(daemon.waitForLine(timeout: 30, after: before) { self.event($0) == "Reloaded" })
        XCTAssertNotNil(
            daemon.waitForLine(timeout: 60, after: before) { self.event($0) == "PlaylistEnded" },
            "the reloaded playlist is played again")

        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        let all = try result.jsonLines()
        XCTAssertEqual(all.compactMap { $0["seq"] as? Int }, Array(1...all.count), "no line lost or torn")
        XCTAssertEqual(all.last?["event"] as? String, "Exited", "the log is complete")
        XCTAssertEqual(all.last?["stopped"] as? Bool, true)
        XCTAssertEqual(
            all.filter { $0["event"] as? String == "MediaPlayerEndReached" && $0["item"] as? Int == 5 }.count, 2)
    }

    func testDaemon_whenSIGINTWhileLooping_exitsZeroWithItsLogFileComplete() throws {
        let logFile = try TestMedia.directory(name: "logs").appendingPathComponent("daemon.log")
        let daemon = try RunningProgram(
            "media-daemon",
            [
                "--loop", "--no-progress", "--log", logFile.path,
                try TestMedia.wav(seconds: 0.3).path,
            ])
        let deadline = Date().addingTimeInterval(60)
        var played = 0
        while played < 3 && Date() < deadline {
            usleep(50_000)
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            played = text.components(separatedBy: "MediaPlayerEndReached").count - 1
        }
        XCTAssertGreaterThanOrEqual(played, 3, "--loop plays the item again and again")
        daemon.send(SIGINT)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "", "with --log nothing goes to stdout")
        let lines = try String(contentsOf: logFile, encoding: .utf8).split(separator: "\n").map {
            try parseJSONObject(String($0))
        }
        XCTAssertEqual(lines.last?["event"] as? String, "Exited")
        XCTAssertEqual(lines.compactMap { $0["seq"] as? Int }, Array(1...lines.count))
    }

    /// Hours of looping are out of reach here; hundreds of plays are not. After a warm-up, the
    /// daemon's resident memory must stay flat while it keeps looping.
    func testDaemon_whenLoopingManyPlays_residentMemoryStaysFlat() throws {
        let plays = Int(ProcessInfo.processInfo.environment["MEDIAEVENTS_DAEMON_PLAYS"] ?? "") ?? 300
        let logFile = try TestMedia.directory(name: "soak-logs").appendingPathComponent("daemon.log")
        let daemon = try RunningProgram(
            "media-daemon",
            [
                "--loop", "--no-progress", "--log", logFile.path,
                try TestMedia.wav(seconds: 0.2).path,
            ])
        func endsSoFar() -> Int {
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            return text.components(separatedBy: "MediaPlayerEndReached").count - 1
        }
        func residentBytes() -> Int {
            let statm =
                (try? String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/statm", encoding: .utf8)) ?? ""
            let pages = Int(statm.split(separator: " ").dropFirst().first ?? "") ?? 0
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        func waitForEnds(_ count: Int, seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while endsSoFar() < count && Date() < deadline { usleep(100_000) }
            return endsSoFar() >= count
        }
        let warmUp = 30
        XCTAssertTrue(waitForEnds(warmUp, seconds: 60), "warm-up plays: \(endsSoFar())")
        let warm = residentBytes()
        XCTAssertTrue(waitForEnds(warmUp + plays, seconds: 240), "plays: \(endsSoFar())")
        let end = residentBytes()
        let growthMB = Double(end - warm) / 1_048_576
        print(
            String(
                format: "daemon soak: %d plays after warm-up; RSS %.1f MB -> %.1f MB (%+.1f MB)",
                endsSoFar() - warmUp, Double(warm) / 1_048_576, Double(end) / 1_048_576, growthMB))
        XCTAssertGreaterThan(warm, 0, "RSS readable")
        // Under AddressSanitizer (the daemon is built like this test) its quarantine keeps freed
        // memory, and under ThreadSanitizer its shadow and per-thread state grow with every
        // thread libvlc and Dispatch make (+3.5 to +6.1 MB in CI's runs), so resident memory
        // says nothing about leaks there; the plain build's run checks the bound.
        if let sanitizer = sanitizerName() {
            print("daemon soak: \(sanitizer) build: the resident-memory bound is not meaningful and not checked")
        } else {
            XCTAssertLessThan(growthMB, 8, "the daemon's memory grows while looping")
        }
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testDaemon_whenAnItemStalls_failsItAtTheOpenTimeoutAndPlaysTheNext() throws {
        let server = try StalledServer()
        let good = try TestMedia.wav(seconds: 0.3)
        let daemon = try RunningProgram(
            "media-daemon",
            [
                "--no-progress", "--exit-at-end", "--open-timeout", "2",
                server.url, good.path,
            ])
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try result.jsonLines()
        let failed = lines.first { $0["event"] as? String == "ItemFailed" }
        XCTAssertEqual(failed?["item"] as? Int, 1)
        XCTAssertEqual(failed?["error"] as? String, "OpenTimeout")
        XCTAssertTrue(
            lines.contains { $0["event"] as? String == "MediaPlayerEndReached" && $0["item"] as? Int == 2 },
            result.stdout)
        let ended = lines.first { $0["event"] as? String == "PlaylistEnded" }
        XCTAssertEqual(ended?["failed"] as? Int, 1)
        XCTAssertEqual(ended?["ended"] as? Int, 1)
    }

    func testDaemon_whenStatusWhilePlaying_reportsAKnownTime() throws {
        let daemon = try RunningProgram("media-daemon", [try TestMedia.wav(seconds: 30, sampleRate: 8000).path])
        XCTAssertNotNil(daemon.waitForLine(timeout: 30) { self.event($0) == "MediaPlayerTimeChanged" })
        daemon.send(SIGUSR1)
        let status = try parseJSONObject(try XCTUnwrap(daemon.waitForLine(timeout: 30) { self.event($0) == "Status" }))
        XCTAssertEqual(status["state"] as? String, "playing")
        XCTAssertGreaterThanOrEqual(status["time_ms"] as? Int ?? -1, 0)
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    func testDaemon_whenUsageError_exitsTwo() throws {
        let result = try runProgram("media-daemon", ["--bogus"], timeout: 30)
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderrLines, ["media-daemon: unknown option --bogus; try 'media-daemon --help'"])
        let missing = try runProgram(
            "media-daemon", ["--playlist", try TestMedia.missing(name: "none.m3u").path], timeout: 30)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("cannot read the playlist"), missing.stderr)
    }
}

/// The sanitizer this process (and so the daemon, built alike) runs under, if any.
private func sanitizerName() -> String? {
    guard let process = dlopen(nil, RTLD_NOW) else { return nil }
    defer { dlclose(process) }
    if dlsym(process, "__asan_init") != nil { return "AddressSanitizer" }
    if dlsym(process, "__tsan_init") != nil { return "ThreadSanitizer" }
    return nil
}
