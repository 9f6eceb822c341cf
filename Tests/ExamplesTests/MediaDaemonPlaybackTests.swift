import Foundation
import Glibc
import TestSupport
import XCTest

/// `media-daemon`'s playbacks, driven as a user would: the `next` storm that wedged libvlc's
/// list player, every line tagged with the playback that sent it, stalls, an idle start, real-
/// time pacing and the gap between entries. Real libvlc, the built daemon, media made here.
final class MediaDaemonPlaybackTests: XCTestCase {
    override func tearDown() {
        for directory in ControlClient.madeDirectories.withLock({ list in
            defer { list = [] }; return list
        }) {
            try? FileManager.default.removeItem(atPath: directory)
        }
        super.tearDown()
    }

    /// Entry `index` (from 0) of the storm: 0.1 to 0.3 s, each a different whole number of
    /// milliseconds, so that a line's `length_ms` names the entry that sent it.
    private static func stormMilliseconds(_ index: Int) -> Int { 100 + index * 200 / 119 }

    private func stormPlaylist() throws -> URL {
        let wavs = try (0..<120).map { index in
            try TestMedia.wav(
                seconds: Double(Self.stormMilliseconds(index)) / 1000, sampleRate: 8000, name: "storm-\(index).wav")
        }
        return try TestMedia.m3u(entries: wavs, name: "storm.m3u")
    }

    /// The lines of `log` whose `length_ms` or `duration_ms` is not the length of the entry
    /// they are tagged with (`expected` by entry id).
    private func lengthMismatches(_ log: DaemonLog, expected: (Int) -> Int?) -> [String] {
        log.lines.compactMap { line in
            guard let entry = line["entry_id"] as? Int, let length = (line["length_ms"] ?? line["duration_ms"]) as? Int,
                length > 0, eventName(line) != "PlaybackEnded"
            else { return nil }
            return length == expected(entry) ? nil : "seq \(line["seq"] ?? 0): \(length) ms for entry \(entry): \(line)"
        }
    }

    // MARK: The storm

    /// The storm of issue #23 against the daemon: 120 entries of 0.1 to 0.3 s, `--loop`, one
    /// client sending `next` 40 times a second while another polls `status`. A new playback
    /// begins within 5 s all along and entries play again once the storm is over, every
    /// playback ends once, and no line is tagged with a playback that did not send it. `MEDIAEVENTS_DAEMON_STORM_SECONDS` sets its
    /// length (30 s by default).
    func testNextStorm_whileAnotherClientPollsStatus_neverWedgesAndEveryPlaybackEndsOnce() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["MEDIAEVENTS_DAEMON_STORM_SECONDS"] ?? "") ?? 30
        let playlist = try stormPlaylist()
        let logFile = try TestMedia.directory(name: "storm-log").appendingPathComponent("daemon.log")
        let path = try testSocketPath()
        let daemon = try RunningProgram(
            "media-daemon", ["--control", path, "--loop", "--log", logFile.path, "--playlist", playlist.path])
        let probe = try ControlClient(path: path)
        XCTAssertTrue(
            try waitUntil(30) { try probe.request("status")["started"] as? Int ?? 0 > 0 }, "the first entry plays")

        struct Counts: Sendable {
            var nexts = 0
            var refused: [String] = []
            var statuses = 0
            var slowestStatus = 0.0
            var failure: String?
        }
        let counts = Locked(Counts())
        let stop = Locked(false)
        let group = DispatchGroup()
        /// A client of its own on a thread of its own, calling `body` every `interval` seconds.
        func run(_ name: String, every interval: Double, _ body: @escaping @Sendable (ControlClient) throws -> Void) {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    let client = try ControlClient(path: path)
                    var next = Date()
                    while !stop.withLock({ $0 }) {
                        try body(client)
                        next += interval
                        let wait = next.timeIntervalSinceNow
                        if wait > 0 { usleep(UInt32(wait * 1_000_000)) } else { next = Date() }
                    }
                } catch {
                    counts.withLock { $0.failure = "\(name): \(error)" }
                }
            }
            thread.start()
        }
        run("next", every: 1.0 / 40) { client in
            let reply = try client.request("next")
            counts.withLock { counts in
                counts.nexts += 1
                if reply["ok"] as? Bool != true { counts.refused.append("\(reply)") }
            }
        }
        run("status", every: 0.05) { client in
            let sent = Date()
            let reply = try client.request("status")
            let took = Date().timeIntervalSince(sent)
            counts.withLock { counts in
                counts.statuses += 1
                counts.slowestStatus = max(counts.slowestStatus, took)
                if reply["ok"] as? Bool != true { counts.failure = "status: \(reply)" }
            }
        }
        /// What a wedge leaves to read: the storm clients' failure, the daemon's watchdog
        /// verdicts (which of its queues stopped), its last lines and where its threads are.
        func evidence() -> String {
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n")
            let verdicts = lines.filter { $0.contains("\"Unhealthy\"") || $0.contains("\"Healthy\"") }
            return "storm clients: \(counts.withLock { $0.failure } ?? "no failure"); "
                + "daemon's stderr: \(daemon.stderr.suffix(2000)); watchdog: \(verdicts.suffix(5)); "
                + "last lines: \(lines.suffix(8).joined(separator: "\n"))\nthe daemon's threads:\n"
                + threadDump(of: daemon.process.processIdentifier)
        }
        // The storm's length: a deadline, not a condition.
        Thread.sleep(forTimeInterval: seconds)
        stop.withLock { $0 = true }
        XCTAssertEqual(
            group.wait(timeout: .now() + 60), .success, "a client got no reply: the daemon wedged; \(evidence())")

        // Still alive: one more next begins a new playback at once. `next` replies before its
        // playback begins, so a storm's last start may still be queued when `before` is read:
        // the SIGTERM waits for a status of the entry this next moved to (or for a playback
        // after it, if that entry already ended: after this next, only its playback or those
        // after it can begin).
        let before: Int
        do {
            before = try probe.request("status")["started"] as? Int ?? 0
        } catch {
            XCTFail("\(error); \(evidence())")
            return
        }
        let moved = try probe.request("next")
        XCTAssertEqual(moved["ok"] as? Bool, true)
        let target = try XCTUnwrap(moved["entry_id"] as? Int, "\(moved)")
        XCTAssertTrue(
            try waitUntil(5) {
                let status = try probe.request("status")
                return status["entry_id"] as? Int == target || status["started"] as? Int ?? 0 > before + 1
            }, "wedged after the storm")
        // And one plays: with the storm over, the entries play on (--loop) and reach Playing.
        XCTAssertTrue(
            try waitUntil(30) {
                let status = try probe.request("status")
                return status["state"] as? String == "playing" && status["started"] as? Int ?? 0 > before
            }, "nothing plays after the storm")
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)

        let log = try DaemonLog(text: try String(contentsOf: logFile, encoding: .utf8))
        XCTAssertEqual(log.lines.compactMap { $0["seq"] as? Int }, Array(1...log.lines.count), "no line lost")
        XCTAssertEqual(eventName(log.lines.last), "Exited")
        let violations = log.playbackViolations()
        XCTAssertEqual(violations, [], "\(violations.count) violations: \(violations.prefix(10))")
        let mismatches = lengthMismatches(log) { entry in
            (1...120).contains(entry) ? Self.stormMilliseconds(entry - 1) : nil
        }
        XCTAssertEqual(mismatches, [], "lines tagged with another entry: \(mismatches.prefix(5))")
        let first = try XCTUnwrap(log.times("PlaybackBegan").first)
        let end = try XCTUnwrap(log.times("Stopping").first)
        let beganStretch = log.longestStretch("PlaybackBegan", from: first, to: end)
        let playingStretch = log.longestStretch("MediaPlayerPlaying", from: first, to: end)
        let ended = log.events("PlaybackEnded")
        let reasons = Dictionary(grouping: ended, by: { $0["reason"] as? String ?? "?" }).mapValues(\.count)
        let final = counts.withLock { $0 }
        XCTAssertNil(final.failure)
        XCTAssertEqual(final.refused, [], "with --loop there is always a next entry")
        print(
            "daemon next storm: \(seconds) s, \(final.nexts + 1) next commands, \(final.statuses) status polls "
                + "(slowest reply \(String(format: "%.3f", final.slowestStatus)) s), "
                + "\(log.events("PlaybackBegan").count) playbacks, \(log.events("MediaPlayerPlaying").count) reached "
                + "Playing, outcomes \(reasons.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")), "
                + "longest stretch without a new "
                + "PlaybackBegan \(String(format: "%.3f", beganStretch)) s, without a new Playing "
                + "\(String(format: "%.3f", playingStretch)) s")
        // Far below what a quiet machine does (40 a second, over 30 playbacks a second), so
        // that a sanitizer's slower daemon passes too; they say that the storm took place.
        XCTAssertGreaterThan(final.nexts, Int(seconds * 10), "the client kept sending")
        XCTAssertLessThan(beganStretch, 5, "a wedge: \(beganStretch) s without a new playback")
        // Reaching Playing during the storm takes an input opened between two skips 25 ms
        // apart: under a sanitizer on two busy cores, nearly all are overtaken first (28.8 s
        // without one under AddressSanitizer while new playbacks kept beginning). The stretch
        // is printed; that the daemon still plays is checked once the storm is over.
        XCTAssertGreaterThan(reasons["skipped"] ?? 0, Int(seconds * 2), "next skipped the playbacks")
        // The playback running at SIGTERM ends as quit; an entry of 0.1 to 0.3 s may also have
        // reached its end just then, with the next one's start not run before the teardown
        // (which then begins nothing).
        XCTAssertTrue(
            ["quit", "ended"].contains(ended.last?["reason"] as? String ?? ""),
            "the last end: \(log.lines.suffix(12).map { String(describing: $0) })")
    }

    // MARK: Attribution

    /// Rapid `next` and `previous` over entries of different lengths, in every dispatch mode:
    /// every line of a playback comes between its PlaybackBegan and the next one, carries its
    /// entry, and names that entry's length; each playback ends exactly once.
    func testAttribution_whenRapidSkipsInEveryDispatchMode_tagsEveryLineWithThePlaybackThatSentIt() throws {
        let lengths = [3000, 3100, 3200, 3300]
        let wavs = try lengths.enumerated().map { index, ms in
            try TestMedia.wav(seconds: Double(ms) / 1000, sampleRate: 8000, name: "skip-\(index).wav")
        }
        for mode in ["inline", "queue-async", "queue-sync"] {
            let path = try testSocketPath()
            let daemon = try RunningProgram(
                "media-daemon", ["--control", path, "--loop", "--dispatch", mode] + wavs.map(\.path))
            let client = try ControlClient(path: path)
            for round in 0..<40 {
                usleep(UInt32(round % 5) * 20_000)
                let reply = try client.request(round % 7 == 3 ? "previous" : "next")
                XCTAssertEqual(reply["ok"] as? Bool, true, "\(mode): \(reply)")
            }
            // Then three playbacks that each reach their length, however slow the machine
            // (under a sanitizer most starts of the storm are overtaken before libvlc reports
            // a length): the length checks below need some.
            for _ in 0..<3 {
                let before = try client.request("status")["playback"] as? Int ?? 0
                XCTAssertEqual(try client.request("next")["ok"] as? Bool, true, "\(mode)")
                XCTAssertTrue(
                    try waitUntil(30) {
                        let status = try client.request("status")
                        return (status["playback"] as? Int ?? 0) > before && status["duration_ms"] != nil
                    }, "\(mode): a playback after the storm reached its length")
            }
            XCTAssertEqual(try client.request("stop")["ok"] as? Bool, true)
            XCTAssertTrue(
                try waitUntil(30) { try client.request("status")["idle"] as? Bool == true }, "\(mode): stopped")
            daemon.send(SIGTERM)
            let result = try daemon.finish(timeout: 30)
            XCTAssertEqual(result.status, 0, "\(mode): \(result.stdoutLines.last ?? "") \(result.stderr)")
            let log = DaemonLog(try result.jsonLines())
            let violations = log.playbackViolations()
            XCTAssertEqual(violations, [], "\(mode): \(violations.prefix(10))")
            let mismatches = lengthMismatches(log) { entry in (1...4).contains(entry) ? lengths[entry - 1] : nil }
            XCTAssertEqual(mismatches, [], "\(mode): \(mismatches.prefix(5))")
            // Starts that a later skip overtook are dropped, more of them on a busy machine: the
            // checks need a few playbacks, not one per skip (three came after the storm).
            XCTAssertGreaterThanOrEqual(log.events("PlaybackBegan").count, 5, "\(mode)")
            XCTAssertGreaterThanOrEqual(
                log.events("MediaPlayerLengthChanged").count, 3, "\(mode): lengths were checked")
            for began in log.events("PlaybackBegan") {
                let entry = try XCTUnwrap(began["entry_id"] as? Int)
                XCTAssertEqual(began["item"] as? Int, entry, "\(mode): \(began)")
                XCTAssertEqual(began["entry"] as? String, wavs[entry - 1].path, "\(mode)")
                XCTAssertEqual(began["mrl"] as? String, wavs[entry - 1].absoluteString, "\(mode)")
            }
        }
    }

    // MARK: Stalls

    /// A server that accepts and never answers, and `/dev/zero` (no track, read forever), fail
    /// as stalled within the stall timeout with the stall as their cause; the next entry plays.
    func testStall_whenASilentServerAndDevZero_failWithTheStallCauseAndTheNextEntryPlays() throws {
        let server = try StalledServer()
        let good = try TestMedia.wav(seconds: 0.3)
        let result = try runProgram(
            "media-daemon",
            ["--no-progress", "--exit-at-end", "--stall-timeout", "2", server.url, good.path, "/dev/zero", good.path],
            timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let log = DaemonLog(try result.jsonLines())
        XCTAssertEqual(log.playbackViolations(), [])
        let ended = log.events("PlaybackEnded")
        XCTAssertEqual(ended.compactMap { $0["reason"] as? String }, ["failed", "eof", "failed", "eof"])
        XCTAssertEqual(ended.compactMap { $0["entry_id"] as? Int }, [1, 2, 3, 4])
        XCTAssertEqual(ended.compactMap { $0["item"] as? Int }, [1, 2, 3, 4])
        for (index, stall) in [(0, "opening"), (2, "no_track")] {
            let line = ended[index]
            XCTAssertEqual(line["error"] as? String, "stalled", "\(line)")
            XCTAssertEqual(line["stall"] as? String, stall, "\(line)")
            XCTAssertTrue((line["cause"] as? String)?.contains("within 2 s") == true, "\(line)")
            let seconds = try XCTUnwrap(line["seconds"] as? Double)
            XCTAssertGreaterThanOrEqual(seconds, 2, "not before the stall timeout: \(line)")
            XCTAssertLessThan(seconds, 3.5, "soon after it: \(line)")
            // The next entry begins at once.
            let failedAt = try XCTUnwrap(line["t"] as? Double)
            let next = try XCTUnwrap(log.events("PlaybackBegan").first { $0["playback"] as? Int == index + 2 })
            XCTAssertLessThan(try XCTUnwrap(next["t"] as? Double) - failedAt, 1, "\(next)")
        }
        XCTAssertEqual(log.events("PlaybackStalled").compactMap { $0["stall"] as? String }, ["opening", "no_track"])
        let summary = try XCTUnwrap(log.events("PlaylistEnded").first)
        XCTAssertEqual(summary["failed"] as? Int, 2)
        XCTAssertEqual(summary["ended"] as? Int, 2)
    }

    // MARK: Playlist files

    /// A playlist file given as an entry plays as a playback of its own that ends as
    /// `expanded`; its entries take its place with ids of their own and play.
    func testExpansion_whenAPlaylistFileIsAnEntry_itEndsAsExpandedAndItsEntriesPlay() throws {
        let inner = try (0..<2).map { try TestMedia.wav(seconds: 0.2, name: "inner-\($0).wav") }
        let list = try TestMedia.m3u(entries: inner)
        let after = try TestMedia.wav(seconds: 0.2, name: "after.wav")
        let result = try runProgram(
            "media-daemon", ["--exit-at-end", "--no-progress", list.path, after.path], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let log = DaemonLog(try result.jsonLines())
        XCTAssertEqual(log.playbackViolations(), [])
        let ended = log.events("PlaybackEnded")
        XCTAssertEqual(ended.compactMap { $0["reason"] as? String }, ["expanded", "eof", "eof", "eof"])
        XCTAssertEqual(ended.first?["entries"] as? Int, 2)
        XCTAssertEqual(ended.first?["entry"] as? String, list.path)
        let expanded = try XCTUnwrap(log.events("PlaylistExpanded").first)
        XCTAssertEqual(expanded["entry_id"] as? Int, 1)
        XCTAssertEqual(expanded["entry_ids"] as? [Int], [3, 4], "new ids, after the entries given")
        XCTAssertEqual(ended.compactMap { $0["entry_id"] as? Int }, [1, 3, 4, 2])
        XCTAssertEqual(ended.compactMap { $0["item"] as? Int }.suffix(3), [1, 2, 3], "the parent's place")
        XCTAssertEqual(ended[1]["entry"] as? String, inner[0].absoluteString, "an expanded entry: its MRL")
        XCTAssertEqual(ended[3]["entry"] as? String, after.path)
    }

    // MARK: Idle start

    /// With no entries the daemon starts idle and plays what a client loads; an empty
    /// playlist file starts idle too (and `--exit-at-end` without `--control` exits at once).
    func testIdleStart_whenNoEntries_waitsForALoadAndPlaysIt() throws {
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let client = try ControlClient(path: path)
        let idle = try client.request("status")
        XCTAssertEqual(idle["ok"] as? Bool, true, "\(idle)")
        XCTAssertEqual(idle["idle"] as? Bool, true)
        XCTAssertEqual(idle["items"] as? Int, 0)
        XCTAssertEqual(idle["live"] as? Bool, true)
        XCTAssertNil(idle["playback"])
        XCTAssertEqual(try client.request("play")["error"] as? String, "the playlist is empty")
        XCTAssertEqual(try client.request("next")["error"] as? String, "no next entry")

        let rejected = try client.request("load", ["entries": ["http://[::1"]])
        XCTAssertEqual(rejected["entry_ids"] as? [Int], [], "not a valid URL: not added (\(rejected))")
        let first = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "first.wav")
        let second = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "second.wav")
        let loaded = try client.request("load", ["entries": [first.path]])
        XCTAssertEqual(loaded["items"] as? Int, 1, "\(loaded)")
        XCTAssertEqual(loaded["entry_ids"] as? [Int], [1])
        var status: [String: Any] = [:]
        XCTAssertTrue(
            try waitUntil(30) {
                status = try client.request("status")
                return status["state"] as? String == "playing"
            }, "the loaded entry plays: \(status)")
        XCTAssertEqual(status["idle"] as? Bool, false)
        XCTAssertEqual(status["playback"] as? Int, 1)
        XCTAssertEqual(status["entry_id"] as? Int, 1)
        XCTAssertEqual(status["entry"] as? String, first.path)
        XCTAssertEqual(status["duration_ms"] as? Int, 30000)
        let appended = try client.request("load", ["entries": [second.path], "mode": "append"])
        XCTAssertEqual(appended["entry_ids"] as? [Int], [2], "\(appended)")
        XCTAssertEqual(try client.request("status")["playback"] as? Int, 1, "an append does not interrupt")
        XCTAssertEqual(try client.request("stop")["ok"] as? Bool, true)
        XCTAssertTrue(
            try waitUntil(30) {
                status = try client.request("status")
                return status["state"] as? String == "stopped"
            }, "stopped: \(status)")
        XCTAssertEqual(status["idle"] as? Bool, true)
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        let log = DaemonLog(try result.jsonLines())
        XCTAssertEqual(log.events("Started").first?["items"] as? Int, 0)
        XCTAssertEqual(log.events("Loaded").count, 3)
        let refused = try XCTUnwrap(log.events("EntryRejected").first)
        XCTAssertEqual(refused["entry"] as? String, "http://[::1")
        XCTAssertEqual(refused["error"] as? String, "invalid_url")
        XCTAssertEqual(log.events("PlaybackEnded").compactMap { $0["reason"] as? String }, ["stopped"])

        let empty = try TestMedia.directory(name: "empty-list").appendingPathComponent("empty.m3u")
        try Data("# nothing yet\n".utf8).write(to: empty)
        let once = try runProgram("media-daemon", ["--playlist", empty.path, "--exit-at-end"], timeout: 30)
        XCTAssertEqual(once.status, 0, once.stderr)
        XCTAssertEqual(try once.jsonLines().compactMap(eventName), ["Started", "Stopping", "Exited"])
        let waiting = try RunningProgram("media-daemon", ["--playlist", empty.path, "--control", try testSocketPath()])
        XCTAssertNotNil(waiting.waitForLine(timeout: 30) { $0.contains(#""event":"Started""#) })
        XCTAssertTrue(waiting.process.isRunning, "an empty playlist file starts idle")
        waiting.send(SIGTERM)
        XCTAssertEqual(try waiting.finish(timeout: 30).status, 0)
    }

    // MARK: Pacing and gaps

    /// The default plays audio at its own speed with no sound card: a 3 s WAV takes 3 s
    /// (± 10 %) from Playing to EndReached. `--untimed` plays it as fast as it decodes.
    func testPacing_whenThreeSecondWAV_takesThreeSecondsAndUntimedLess() throws {
        let wav = try TestMedia.wav(seconds: 3)
        func playingToEnd(_ options: [String]) throws -> Double {
            let result = try runProgram(
                "media-daemon", ["--exit-at-end", "--no-progress"] + options + [wav.path], timeout: 60)
            XCTAssertEqual(result.status, 0, result.stderr)
            let log = DaemonLog(try result.jsonLines())
            XCTAssertEqual(log.events("PlaybackEnded").first?["reason"] as? String, "eof")
            let playing = try XCTUnwrap(log.times("MediaPlayerPlaying").first)
            let end = try XCTUnwrap(log.times("MediaPlayerEndReached").first)
            return end - playing
        }
        let paced = try playingToEnd([])
        let untimed = try playingToEnd(["--untimed"])
        print(
            "daemon pacing: a 3 s WAV plays in \(String(format: "%.3f", paced)) s (untimed: \(String(format: "%.3f", untimed)) s)"
        )
        XCTAssertEqual(paced, 3, accuracy: 0.3, "real-time pacing")
        XCTAssertLessThan(untimed, 2.7, "--untimed does not wait for the clock")
    }

    /// The gap between entries, from one's EndReached to the next one's Playing, over ten
    /// entries of 0.5 s: measured (p50, max) and bounded.
    func testGap_betweenEntries_isShort() throws {
        let wavs = try (0..<10).map { try TestMedia.wav(seconds: 0.5, name: "gap-\($0).wav") }
        let result = try runProgram("media-daemon", ["--exit-at-end", "--no-progress"] + wavs.map(\.path), timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let log = DaemonLog(try result.jsonLines())
        let ends = log.byPlayback("MediaPlayerEndReached")
        let playing = log.byPlayback("MediaPlayerPlaying")
        let gaps = try (1..<10).map { playback -> Double in
            let end = try XCTUnwrap(ends[playback]?.first?["t"] as? Double, "playback \(playback) ended")
            let next = try XCTUnwrap(playing[playback + 1]?.first?["t"] as? Double, "\(playback + 1) played")
            return next - end
        }
        print(
            "daemon gap between entries (EndReached to the next Playing, \(gaps.count) gaps): p50 "
                + "\(String(format: "%.1f", percentile(gaps, 0.5) * 1000)) ms, max "
                + "\(String(format: "%.1f", (gaps.max() ?? 0) * 1000)) ms")
        XCTAssertTrue(gaps.allSatisfy { $0 > 0 }, "\(gaps)")
        XCTAssertLessThan(gaps.max() ?? 0, 1, "\(gaps)")
    }
}
