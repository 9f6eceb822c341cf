import Foundation
import Glibc
import TestSupport
import XCTest

/// systemd's watchdog and `media-daemon`'s liveness: `WATCHDOG=1` only while every control
/// call returns within 5 s and no playback is stalled, and again once that holds.
///
/// Both cases are made real by the daemon's own output: its log lines are written by libvlc's
/// threads (inline dispatch), so a reader that stops reading standard output (a stuck journald,
/// a pipeline) blocks libvlc's input thread in `write(2)` once the pipe is full. A `stop` then
/// waits in libvlc for that thread (the player's control queue is stuck), and with no `stop`
/// the playback makes no progress until the stall timeout (it is stalled). Reading again
/// unblocks both.
final class MediaDaemonHealthTests: XCTestCase {
    override func tearDown() {
        for directory in ControlClient.madeDirectories.withLock({ list in
            defer { list = [] }; return list
        }) {
            try? FileManager.default.removeItem(atPath: directory)
        }
        super.tearDown()
    }

    private struct Setup {
        let daemon: RunningProgram
        let output: GatedOutput
        let listener: NotifyListener
        let client: ControlClient
    }

    /// A daemon playing a long entry then a short one, its standard output gated, watchdog
    /// pings every 0.25 s to a listener; returns once it pings and plays.
    private func start(stallTimeout: String) throws -> Setup {
        let long = try TestMedia.wav(seconds: 60, sampleRate: 8000, name: "long.wav")
        let short = try TestMedia.wav(seconds: 0.5, sampleRate: 8000, name: "short.wav")
        let listener = try NotifyListener()
        let output = try GatedOutput()
        let path = try testSocketPath()
        let daemon = try RunningProgram(
            "media-daemon", ["--control", path, "--stall-timeout", stallTimeout, long.path, short.path],
            standardOutput: output.writeEnd, environment: listener.environment(watchdogSeconds: 0.5))
        // The daemon has its copy: ours would keep the pipe open after it exits.
        try output.writeEnd.close()
        let client = try ControlClient(path: path)
        XCTAssertTrue(listener.waitFor(timeout: 30) { $0.filter { $0.text == "WATCHDOG=1" }.count >= 4 }, "pings")
        XCTAssertNotNil(output.waitForLine(timeout: 30) { eventName($0) == "MediaPlayerPlaying" }, "plays")
        return Setup(daemon: daemon, output: output, listener: listener, client: client)
    }

    /// Stops reading the daemon's output until the pipe holds so much that the lines libvlc's
    /// thread writes next do not fit: that thread then waits in `write(2)`.
    private func blockTheOutput(_ setup: Setup) {
        setup.output.pause()
        XCTAssertTrue(
            waitUntil(30) { setup.output.pendingBytes > 3600 }, "the pipe fills: \(setup.output.pendingBytes)")
    }

    /// Waits until `status` says the daemon is not live for a reason containing `reason`;
    /// returns that reply.
    private func waitUntilNotLive(_ client: ControlClient, _ reason: String) throws -> [String: Any] {
        var status: [String: Any] = [:]
        let found = try waitUntil(30) {
            status = try client.request("status")
            return status["live"] as? Bool == false && (status["unhealthy"] as? String)?.contains(reason) == true
        }
        XCTAssertTrue(found, "not live because '\(reason)': \(status)")
        return status
    }

    /// Waits until no ping came for 2 s (8 intervals); returns whether that happened.
    private func waitForPingsToStop(_ listener: NotifyListener) -> Bool {
        waitUntil(30) { (listener.pings.last.map { Date().timeIntervalSince($0) } ?? 99) > 2 }
    }

    /// Reads again, then waits for pings and `status` to say live, and for the log's
    /// `Unhealthy` line (with `reason`) and `Healthy` line.
    private func unblockAndExpectLiveAgain(_ setup: Setup, reason: String) throws {
        let pingsWhileStuck = setup.listener.pings.count
        let resumed = Date()
        setup.output.resume()
        XCTAssertTrue(setup.listener.waitFor(timeout: 30) { _ in setup.listener.pings.count > pingsWhileStuck })
        XCTAssertTrue(try waitUntil(30) { try setup.client.request("status")["live"] as? Bool == true })
        let pings = setup.listener.pings
        let before = pings.last { $0 < resumed }
        let after = pings.first { $0 > resumed }
        let gap = try XCTUnwrap(after).timeIntervalSince(try XCTUnwrap(before))
        print("daemon watchdog: no ping for \(String(format: "%.2f", gap)) s while not live (\(reason))")
        XCTAssertGreaterThan(gap, 2)
        let unhealthy = setup.output.waitForLine(timeout: 30) { eventName($0) == "Unhealthy" }
        XCTAssertTrue((unhealthy?["reason"] as? String)?.contains(reason) == true, "\(unhealthy ?? [:])")
        XCTAssertNotNil(setup.output.waitForLine(timeout: 30) { eventName($0) == "Healthy" })
        XCTAssertTrue(
            setup.listener.all.contains { $0.text.hasPrefix("STATUS=not live: ") && $0.text.contains(reason) },
            "systemd's status says why: \(setup.listener.all.map(\.text).filter { $0.hasPrefix("STATUS") })")
    }

    private func finish(_ setup: Setup) throws {
        setup.daemon.send(SIGTERM)
        let result = try setup.daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(setup.output.waitForEOF(timeout: 30))
        let log = DaemonLog(try setup.output.lines.map(parseJSONObject))
        XCTAssertEqual(log.playbackViolations(), [])
        XCTAssertEqual(eventName(log.lines.last), "Exited")
        // A line when the cause changes, not one per check while a call keeps waiting (at
        // most two here: a stall may leave the player's queue waiting a moment after it).
        let verdicts = log.lines.filter { eventName($0) == "Unhealthy" }
        XCTAssertLessThanOrEqual(verdicts.count, 2, "\(verdicts.prefix(3))")
    }

    /// A `stop` that hangs in libvlc (joining an input thread that cannot return) holds the
    /// player's control queue: after 5 s the daemon is not live and the pings stop; once the
    /// call returns they come again.
    func testWatchdog_whenAControlCallHangs_pingsStopUntilItReturns() throws {
        let setup = try start(stallTimeout: "600")
        blockTheOutput(setup)
        XCTAssertEqual(try setup.client.request("stop")["ok"] as? Bool, true, "the command itself never waits")
        let status = try waitUntilNotLive(setup.client, "player's control queue")
        XCTAssertEqual(status["playback"] as? Int, 1, "status answers meanwhile")
        XCTAssertTrue(waitForPingsToStop(setup.listener), "pings while a control call hangs")
        try unblockAndExpectLiveAgain(setup, reason: "player's control queue")
        let ended = setup.output.waitForLine(timeout: 30) { eventName($0) == "PlaybackEnded" }
        XCTAssertEqual(ended?["reason"] as? String, "stopped", "the stop went through: \(ended ?? [:])")
        try finish(setup)
    }

    /// An idle daemon is live: while no client sends anything for twice the 5 s bound, the
    /// thread that reads the clients' requests still answers its probes and the pings go on.
    func testWatchdog_whenNoClientSendsAnything_pingsGoOn() throws {
        let setup = try start(stallTimeout: "600")
        let from = setup.listener.pings.count
        // 40 pings, 0.25 s apart: 10 s without a request.
        XCTAssertTrue(
            setup.listener.waitFor(timeout: 60) { _ in setup.listener.pings.count >= from + 40 },
            "pings stopped after \(setup.listener.pings.count - from) while the daemon was idle")
        XCTAssertEqual(try setup.client.request("status")["live"] as? Bool, true)
        try finish(setup)
        let verdicts = try setup.output.lines.map(parseJSONObject).filter { eventName($0) == "Unhealthy" }
        XCTAssertEqual(verdicts.count, 0, "\(verdicts.prefix(2))")
    }

    /// A playback that makes no progress for the stall timeout is stalled: no ping until it
    /// has ended (failed, with the stall as its cause) and the next entry plays.
    func testWatchdog_whenThePlaybackStalls_pingsStopUntilItEndsAndTheNextPlays() throws {
        let setup = try start(stallTimeout: "2")
        blockTheOutput(setup)
        let status = try waitUntilNotLive(setup.client, "playback 1 stalled")
        XCTAssertEqual(status["state"] as? String, "playing", "libvlc still says playing: \(status)")
        XCTAssertTrue(waitForPingsToStop(setup.listener), "pings while the playback is stalled")
        try unblockAndExpectLiveAgain(setup, reason: "playback 1 stalled")
        let ended = setup.output.waitForLine(timeout: 30) { eventName($0) == "PlaybackEnded" }
        XCTAssertEqual(ended?["reason"] as? String, "failed", "\(ended ?? [:])")
        XCTAssertEqual(ended?["error"] as? String, "stalled")
        XCTAssertEqual(ended?["stall"] as? String, "no_progress")
        XCTAssertNotNil(
            setup.output.waitForLine(timeout: 30) {
                eventName($0) == "MediaPlayerPlaying" && $0["playback"] as? Int == 2
            },
            "the next entry plays")
        try finish(setup)
    }
}
