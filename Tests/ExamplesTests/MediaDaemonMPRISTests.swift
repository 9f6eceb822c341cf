import Foundation
import Glibc
import TestSupport
import XCTest

/// `media-daemon --mpris` on a bus of the test's own, driven by Debian's MPRIS client
/// (`playerctl`) and D-Bus tools (`dbus-send`, `dbus-monitor`, `dbus-run-session`): clients
/// nobody here wrote.
final class MediaDaemonMPRISTests: XCTestCase {
    private let busName = "org.mpris.MediaPlayer2.media_daemon"
    private let trackPrefix = "/org/mediaevents/media_daemon/entry/"

    /// 30 s tones: the daemon plays in real time, so they outlast every test.
    private func tones(_ names: String...) throws -> [URL] {
        try names.enumerated().map { index, name in
            try TestMedia.wav(seconds: 30, sampleRate: 8000, frequency: 440 + 110 * Double(index), name: name)
        }
    }

    /// A 30 s FLAC tagged with a title, an artist and an album.
    private func taggedFLAC() throws -> URL {
        try TestMedia.ffmpeg(
            [
                "-f", "lavfi", "-i", "sine=frequency=440:duration=30:sample_rate=8000", "-metadata", "title=Tone Poem",
                "-metadata", "artist=The Sines", "-metadata", "album=Test Signals", "-c:a", "flac",
            ], name: "tagged.flac")
    }

    /// A daemon on `bus` playing `media`, returned once its name is on the bus (its
    /// `MPRISReady` line is written after the bus answered the request).
    private func startDaemon(
        _ media: [URL], bus: PrivateBus, options: [String] = ["--mpris"], line: UInt = #line
    ) throws -> RunningProgram {
        let daemon = try RunningProgram(
            "media-daemon", ["--no-progress"] + options + media.map(\.path), environment: bus.environment)
        guard daemon.waitForLine(timeout: 30, { $0.contains("\"MPRISReady\"") }) != nil else {
            daemon.send(SIGKILL)
            let result = try daemon.finish(timeout: 10)
            XCTFail("no MPRISReady line: \(result.stdout)\(result.stderr)", line: line)
            throw ProgramFailure(description: "the daemon did not appear on the bus")
        }
        return daemon
    }

    /// Ends the daemon with SIGTERM: it exits 0.
    private func stop(_ daemon: RunningProgram, line: UInt = #line) throws -> ProgramResult {
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr, line: line)
        return result
    }

    /// `playerctl -p media_daemon ARGUMENTS`: its standard output, trimmed; fails the test when
    /// it fails.
    @discardableResult
    private func playerctl(_ bus: PrivateBus, _ arguments: String..., line: UInt = #line) throws -> String {
        let result = try bus.playerctl(["-p", "media_daemon"] + arguments)
        XCTAssertEqual(result.status, 0, "playerctl \(arguments): \(result.stderr)", line: line)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Asks `playerctl ARGUMENTS` until its output satisfies `predicate` (30 s at most); returns
    /// the last output.
    @discardableResult
    private func waitForPlayerctl(
        _ bus: PrivateBus, _ arguments: [String], line: UInt = #line, _ predicate: (String) -> Bool
    ) throws -> String {
        var last = ""
        let met = try waitUntil(30) {
            last = try bus.playerctl(["-p", "media_daemon"] + arguments).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return predicate(last)
        }
        XCTAssertTrue(met, "playerctl \(arguments): last answered '\(last)'", line: line)
        return last
    }

    /// The values of `playerctl metadata`, by key.
    private func metadata(_ bus: PrivateBus) throws -> [String: String] {
        var values: [String: String] = [:]
        for line in try playerctl(bus, "metadata").split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard fields.count == 3 else { continue }
            values[String(fields[1])] = fields[2].trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    private func seconds(_ text: String) -> Double { Double(text) ?? -1 }

    /// `lines` without repeats of the line before (a client may print a value again when
    /// another property changed).
    private func collapsed(_ lines: [String]) -> [String] {
        lines.enumerated().filter { $0.offset == 0 || lines[$0.offset - 1] != $0.element }.map(\.element)
    }

    // MARK: The session

    /// Issue #28's "done when": `dbus-run-session -- sh -c 'media-daemon --mpris a.wav b.wav &
    /// …; playerctl status; playerctl next; playerctl metadata'`, waiting for the name instead
    /// of sleeping.
    func testMPRIS_doneWhenSession_playerctlSeesAPlayer() throws {
        let media = try tones("a.wav", "b.wav")
        let log = media[0].deletingLastPathComponent().appendingPathComponent("daemon.log")
        let script = """
            "$0" --mpris "$1" "$2" > "$3" 2>&1 &
            daemon=$!
            echo "daemon $daemon"
            i=0
            until playerctl -l 2>/dev/null | grep -qx media_daemon; do
                i=$((i + 1))
                if [ $i -gt 600 ]; then kill $daemon; echo "no player within 30 s"; exit 9; fi
                sleep 0.05
            done
            playerctl status
            playerctl next
            playerctl metadata
            kill $daemon
            wait $daemon
            echo "daemon exited $?"
            """
        let session = try BusClient(
            "/usr/bin/dbus-run-session",
            ["--", "sh", "-c", script, try productPath("media-daemon"), media[0].path, media[1].path, log.path],
            environment: [:])
        let result: ToolResult
        do {
            result = try session.finish(timeout: 60)
        } catch {
            // The daemon outlived its session: stopped here, by its pid.
            if let pid = session.lines.first(where: { $0.hasPrefix("daemon ") }).flatMap({ Int32($0.dropFirst(7)) }) {
                kill(pid, SIGKILL)
            }
            throw error
        }
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertEqual(lines.dropFirst().first, "Playing", result.stdout)
        XCTAssertTrue(
            lines.contains { $0.hasPrefix("media_daemon mpris:trackid") && $0.hasSuffix("'\(trackPrefix)2'") },
            "after next, the second entry: \(result.stdout)")
        XCTAssertTrue(
            lines.contains { $0.hasPrefix("media_daemon xesam:url") && $0.hasSuffix(media[1].path) }, result.stdout)
        XCTAssertTrue(
            lines.contains { $0.hasPrefix("media_daemon xesam:title") && $0.hasSuffix("b.wav") }, result.stdout)
        XCTAssertTrue(
            lines.contains { $0.hasPrefix("media_daemon mpris:length") && $0.hasSuffix("30000000") }, result.stdout)
        XCTAssertEqual(lines.last, "daemon exited 0", result.stdout)
    }

    // MARK: playerctl

    func testPlayerctl_listsStatusMetadataAndControlsThePlaylist() throws {
        let bus = try PrivateBus()
        let media = [try taggedFLAC()] + (try tones("second.wav"))
        let daemon = try startDaemon(media, bus: bus)
        XCTAssertEqual(try bus.playerctl(["-l"]).stdout.split(separator: "\n"), ["media_daemon"])
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }

        // The tags and the length come with libvlc's `MetaChanged` and `LengthChanged`, which
        // may follow `Playing`: until then the title is the file's name.
        var tags: [String: String] = [:]
        XCTAssertTrue(
            try waitUntil(30) {
                tags = try metadata(bus)
                return tags["xesam:title"] != "tagged.flac" && tags["xesam:album"] != nil && tags["mpris:length"] != nil
            }, "the tags never came: \(tags)")
        XCTAssertEqual(tags["mpris:trackid"], "'\(trackPrefix)1'", "\(tags)")
        XCTAssertEqual(tags["xesam:url"], URL(fileURLWithPath: media[0].path).absoluteString, "\(tags)")
        XCTAssertEqual(tags["xesam:title"], "Tone Poem", "\(tags)")
        XCTAssertEqual(tags["xesam:artist"], "The Sines", "\(tags)")
        XCTAssertEqual(tags["xesam:album"], "Test Signals", "\(tags)")
        XCTAssertEqual(tags["mpris:length"].flatMap { Int($0) }.map { abs($0 - 30_000_000) < 100_000 }, true, "\(tags)")

        try playerctl(bus, "pause")
        try waitForPlayerctl(bus, ["status"]) { $0 == "Paused" }
        try playerctl(bus, "play")
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }
        try playerctl(bus, "play-pause")
        try waitForPlayerctl(bus, ["status"]) { $0 == "Paused" }
        try playerctl(bus, "play-pause")
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }

        // Next answers once the player has the entry's media: its metadata is complete at once.
        try playerctl(bus, "next")
        var now = try metadata(bus)
        XCTAssertEqual(now["mpris:trackid"], "'\(trackPrefix)2'", "\(now)")
        XCTAssertEqual(now["xesam:title"], "second.wav", "libvlc's title is the file name: \(now)")
        // The last entry, no loop: CanGoNext is false (playerctl then refuses to call Next),
        // and Next changes nothing.
        XCTAssertTrue(try bus.property(busName, "CanGoNext").stdout.contains("boolean false"))
        XCTAssertEqual(try bus.send(busName, "org.mpris.MediaPlayer2.Player", "Next").status, 0)
        XCTAssertEqual(try metadata(bus)["mpris:trackid"], "'\(trackPrefix)2'")
        try playerctl(bus, "previous")
        now = try metadata(bus)
        XCTAssertEqual(now["mpris:trackid"], "'\(trackPrefix)1'", "\(now)")
        XCTAssertEqual(now["xesam:title"], "Tone Poem", "\(now)")

        try playerctl(bus, "volume", "0.4")
        XCTAssertEqual(try playerctl(bus, "volume"), "0.400000")
        try playerctl(bus, "loop", "Track")
        XCTAssertEqual(try playerctl(bus, "loop"), "Track")
        try playerctl(bus, "loop", "Playlist")
        XCTAssertTrue(try bus.property(busName, "CanGoPrevious").stdout.contains("boolean true"), "Playlist wraps")
        try playerctl(bus, "stop")
        try waitForPlayerctl(bus, ["status"]) { $0 == "Stopped" }
        try playerctl(bus, "play")
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }

        let log = try DaemonLog(text: try stop(daemon).stdout)
        XCTAssertEqual(log.playbackViolations(), [])
        XCTAssertEqual(
            log.events("PlaybackEnded").compactMap { $0["reason"] as? String },
            ["skipped", "skipped", "stopped", "quit"])
    }

    /// Position, Seek and SetPosition: the position answered follows the jump at once (also while
    /// paused, where libvlc reports the new time only when playback resumes), and `Seeked`
    /// carries it.
    func testPlayerctl_positionAndSeek_sendSeekedAndMoveThePosition() throws {
        let bus = try PrivateBus()
        let daemon = try startDaemon(try tones("a.wav", "b.wav"), bus: bus)
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }
        let monitor = try BusClient(
            "/usr/bin/dbus-monitor", ["--address", bus.address, "type='signal',member='Seeked'"], environment: [:])
        defer { monitor.stop() }
        // dbus-monitor prints the bus's NameAcquired once it monitors.
        XCTAssertTrue(
            monitor.waitForLines(timeout: 30) { $0.contains { $0.contains("NameAcquired") || $0.contains("NameLost") } }
        )

        // playerctl refuses to seek a player that cannot: libvlc's `SeekableChanged` may
        // follow `Playing`.
        XCTAssertTrue(
            try waitUntil(30) { try bus.property(busName, "CanSeek").stdout.contains("boolean true") },
            "CanSeek never became true")
        try playerctl(bus, "position", "10")
        XCTAssertTrue(
            monitor.waitForLines(timeout: 30) { $0.contains { $0.contains("int64 10000000") } }, monitor.stdout)
        try waitForPlayerctl(bus, ["position"]) { (10...13).contains(seconds($0)) }
        try playerctl(bus, "pause")
        try waitForPlayerctl(bus, ["status"]) { $0 == "Paused" }
        try playerctl(bus, "position", "4-")
        let back = try playerctl(bus, "position")
        XCTAssertTrue((6...9).contains(seconds(back)), "paused, 4 s back from 10 to 13: \(back)")
        XCTAssertTrue(
            monitor.waitForLines(timeout: 30) { $0.filter { $0.contains("member=Seeked") }.count == 2 }, monitor.stdout)

        // SetPosition with the current track id moves; with another one it is stale: ignored.
        let current = try metadata(bus)["mpris:trackid"]?.trimmingCharacters(in: CharacterSet(charactersIn: "'")) ?? ""
        XCTAssertEqual(current, "\(trackPrefix)1")
        _ = try bus.send(
            busName, "org.mpris.MediaPlayer2.Player", "SetPosition", ["objpath:\(current)", "int64:20000000"])
        XCTAssertEqual(try playerctl(bus, "position"), "20.000000")
        _ = try bus.send(
            busName, "org.mpris.MediaPlayer2.Player", "SetPosition", ["objpath:\(trackPrefix)2", "int64:1000000"])
        XCTAssertEqual(try playerctl(bus, "position"), "20.000000", "a stale track id is ignored")
        try playerctl(bus, "play")
        try waitForPlayerctl(bus, ["position"]) { (20...24).contains(seconds($0)) }
        // Past the end: as Next.
        try playerctl(bus, "position", "30+")
        XCTAssertEqual(try metadata(bus)["mpris:trackid"], "'\(trackPrefix)2'")
        _ = try stop(daemon)
    }

    /// `playerctl --follow` prints each change as the daemon sends PropertiesChanged.
    func testPlayerctlFollow_printsEveryChange() throws {
        let bus = try PrivateBus()
        let daemon = try startDaemon(try tones("a.wav", "b.wav"), bus: bus)
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }
        let statuses = try BusClient(
            "/usr/bin/playerctl", ["-p", "media_daemon", "--follow", "status"], environment: bus.environment)
        let tracks = try BusClient(
            "/usr/bin/playerctl",
            ["-p", "media_daemon", "--follow", "metadata", "--format", "{{mpris:trackid}} {{xesam:title}}"],
            environment: bus.environment)
        let volumes = try BusClient(
            "/usr/bin/playerctl", ["-p", "media_daemon", "--follow", "volume"], environment: bus.environment)
        defer { [statuses, tracks, volumes].forEach { $0.stop() } }
        // Each prints the current value first: it follows from then on.
        XCTAssertTrue(statuses.waitForLines(timeout: 30) { self.collapsed($0) == ["Playing"] }, statuses.stdout)
        XCTAssertTrue(
            tracks.waitForLines(timeout: 30) { self.collapsed($0) == ["'\(trackPrefix)1' a.wav"] }, tracks.stdout)
        XCTAssertTrue(volumes.waitForLines(timeout: 30) { self.collapsed($0) == ["1.000000"] }, volumes.stdout)

        try playerctl(bus, "pause")
        XCTAssertTrue(
            statuses.waitForLines(timeout: 30) { self.collapsed($0) == ["Playing", "Paused"] }, statuses.stdout)
        try playerctl(bus, "next")
        XCTAssertTrue(
            tracks.waitForLines(timeout: 30) {
                self.collapsed($0) == ["'\(trackPrefix)1' a.wav", "'\(trackPrefix)2' b.wav"]
            }, tracks.stdout)
        XCTAssertTrue(
            statuses.waitForLines(timeout: 30) { self.collapsed($0) == ["Playing", "Paused", "Playing"] },
            statuses.stdout)
        try playerctl(bus, "volume", "0.25")
        XCTAssertTrue(
            volumes.waitForLines(timeout: 30) { self.collapsed($0) == ["1.000000", "0.250000"] }, volumes.stdout)
        try playerctl(bus, "stop")
        XCTAssertTrue(
            statuses.waitForLines(timeout: 30) { self.collapsed($0) == ["Playing", "Paused", "Playing", "Stopped"] },
            statuses.stdout)
        _ = try stop(daemon)
    }

    /// Rate, LoopStatus and OpenUri, and what the daemon refuses, through `dbus-send`.
    func testDBusSend_rateLoopAndOpenUri() throws {
        let bus = try PrivateBus()
        let media = try tones("a.wav", "b.wav", "c.wav")
        let daemon = try startDaemon(Array(media.prefix(2)), bus: bus)
        let player = "org.mpris.MediaPlayer2.Player"
        let properties = "org.freedesktop.DBus.Properties"
        _ = try bus.send(busName, properties, "Set", ["string:\(player)", "string:Rate", "variant:double:2"])
        XCTAssertTrue(try bus.property(busName, "Rate").stdout.contains("double 2"))
        let refused = try bus.send(
            busName, properties, "Set", ["string:\(player)", "string:LoopStatus", "variant:string:Always"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("InvalidArgs"), refused.stderr)
        XCTAssertTrue(try bus.property(busName, "LoopStatus").stdout.contains("\"None\""))

        let opened = try bus.send(
            busName, player, "OpenUri", ["string:\(URL(fileURLWithPath: media[2].path).absoluteString)"])
        XCTAssertEqual(opened.status, 0, opened.stderr)
        XCTAssertEqual(try metadata(bus)["mpris:trackid"], "'\(trackPrefix)3'", "OpenUri plays the new entry at once")
        let unsupported = try bus.send(busName, player, "OpenUri", ["string:gopher://example.invalid/a.wav"])
        XCTAssertNotEqual(unsupported.status, 0)
        XCTAssertTrue(unsupported.stderr.contains("NotSupported"), unsupported.stderr)
        let identity = try bus.property(busName, "Identity", interface: "org.mpris.MediaPlayer2")
        XCTAssertTrue(identity.stdout.contains("\"media-daemon\""), identity.stdout)

        // Quit: the daemon exits as after SIGTERM.
        XCTAssertEqual(try bus.send(busName, "org.mpris.MediaPlayer2", "Quit").status, 0)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        let log = try DaemonLog(text: result.stdout)
        XCTAssertEqual(log.events("PlaybackBegan").compactMap { $0["entry_id"] as? Int }, [1, 3])
        XCTAssertEqual(log.events("Stopping").first?["reason"] as? String, "MPRIS Quit")
    }

    // MARK: The bus

    /// A bus that goes away while the daemon plays: the daemon says so and plays on.
    func testBusGoesAway_daemonLogsItAndPlaysOn() throws {
        let bus = try PrivateBus()
        let daemon = try startDaemon(try tones("a.wav"), bus: bus)
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }
        bus.stop()
        let lost = daemon.waitForLine(timeout: 30) { $0.contains("\"MPRISDisconnected\"") }
        XCTAssertNotNil(lost, daemon.stdout)
        // Playing on: the time of two Status lines (SIGUSR1) advances.
        var times: [Int] = []
        XCTAssertTrue(
            waitUntil(30) {
                daemon.send(SIGUSR1)
                let statuses = daemon.stdoutLines.compactMap { try? parseJSONObject($0) }.filter {
                    eventName($0) == "Status" && $0["state"] as? String == "playing"
                }
                times = statuses.compactMap { $0["time_ms"] as? Int }
                return Set(times).count >= 2
            }, "\(times)")
        let result = try stop(daemon)
        XCTAssertTrue(result.stdout.contains("\"Exited\""))
    }

    /// A bus that stops reading (SIGSTOP): the D-Bus thread keeps what it sends, and the player
    /// and the control socket go on as before; once the bus runs again, clients catch up.
    func testSuspendedBus_neverSlowsThePlayer() throws {
        let bus = try PrivateBus()
        let path = try testSocketPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let daemon = try startDaemon(try tones("a.wav", "b.wav"), bus: bus, options: ["--mpris", "--control", path])
        try waitForPlayerctl(bus, ["status"]) { $0 == "Playing" }
        let tracks = try BusClient(
            "/usr/bin/playerctl", ["-p", "media_daemon", "--follow", "metadata", "--format", "{{mpris:trackid}}"],
            environment: bus.environment)
        defer { tracks.stop() }
        XCTAssertTrue(tracks.waitForLines(timeout: 30) { $0 == ["'\(trackPrefix)1'"] }, tracks.stdout)

        bus.suspend()
        let client = try ControlClient(path: path)
        func began() -> [Int] {
            daemon.stdoutLines.compactMap { try? parseJSONObject($0) }.filter { eventName($0) == "PlaybackBegan" }
                .compactMap { $0["entry_id"] as? Int }
        }
        for round in 1...5 {
            for (command, entry) in [("next", 2), ("previous", 1)] {
                XCTAssertEqual(try client.request(command, timeout: 10)["ok"] as? Bool, true)
                XCTAssertTrue(
                    waitUntil(30) { began().count == 2 * round + (entry == 2 ? 0 : 1) && began().last == entry },
                    "\(command) in round \(round) played while the bus was suspended: \(began())")
            }
        }
        XCTAssertEqual(try client.request("status", timeout: 10)["live"] as? Bool, true)

        bus.resume()
        XCTAssertTrue(
            tracks.waitForLines(timeout: 30) { lines in
                lines.contains("'\(self.trackPrefix)2'") && lines.last == "'\(self.trackPrefix)1'"
            }, tracks.stdout)
        XCTAssertEqual(try playerctl(bus, "status"), "Playing")
        XCTAssertFalse(daemon.stdout.contains("MPRISDisconnected"), daemon.stdout)
        _ = try stop(daemon)
    }

    /// `--mpris` with no bus to connect to: a message and status 1 at once, before playing.
    func testNoBus_failsAtStartWithStatus1() throws {
        let media = try tones("a.wav")
        let missing = try testSocketPath("no-bus")
        let refused = try RunningProgram(
            "media-daemon", ["--mpris", media[0].path],
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(missing)"]
        ).finish(timeout: 30)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--mpris: cannot connect to the session bus"), refused.stderr)
        XCTAssertFalse(refused.stdout.contains("PlaybackBegan"), "nothing played: \(refused.stdout)")
        let unset = try RunningProgram(
            "media-daemon", ["--mpris", media[0].path],
            shellScript: "unset DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR; exec \"$0\" \"$@\""
        ).finish(timeout: 30)
        XCTAssertEqual(unset.status, 1, unset.stderr)
        XCTAssertTrue(unset.stderr.contains("neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR"), unset.stderr)
    }

    /// A second daemon on the same bus takes the instance name the specification suggests.
    func testNameTaken_secondDaemonTakesAnInstanceName() throws {
        let bus = try PrivateBus()
        let media = try tones("a.wav")
        let first = try startDaemon(media, bus: bus)
        let second = try startDaemon(media, bus: bus, options: ["--mpris", "--mpris-name", "media_daemon"])
        let pid = second.process.processIdentifier
        let ready = try parseJSONObject(second.waitForLine(timeout: 30) { $0.contains("\"MPRISReady\"") } ?? "{}")
        XCTAssertEqual(ready["name"] as? String, "\(busName).instance\(pid)")
        let players = try bus.playerctl(["-l"]).stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(players.sorted(), ["media_daemon", "media_daemon.instance\(pid)"])
        _ = try stop(second)
        _ = try stop(first)
    }

    /// The system bus, as configured on Debian, with the shipped policy file: the daemon owns
    /// its name, every user reads, the policy's group calls; without the file it fails at start.
    func testSystemBus_shippedPolicyLetsTheDaemonOwnItsName() throws {
        let media = try tones("a.wav")
        let shipped = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Examples/media-daemon/media-daemon-mpris.conf"),
            encoding: .utf8)
        let user = String(cString: getpwuid(geteuid()).pointee.pw_name)
        // The test's user in place of the daemon's user; the group "audio" kept: not the test's.
        let policy = shipped.replacingOccurrences(of: "user=\"media-daemon\"", with: "user=\"\(user)\"")
        XCTAssertNotEqual(policy, shipped)
        let bus = try PrivateBus(.system, policies: [policy])
        let daemon = try startDaemon(media, bus: bus, options: ["--mpris", "--mpris-bus", "system"])
        XCTAssertTrue(try bus.property(busName, "PlaybackStatus").stdout.contains("string \""), "every user reads")
        let call = try bus.send(busName, "org.mpris.MediaPlayer2.Player", "Pause")
        let member = getgrouplist(user: user).contains(where: { $0 == "audio" })
        if member {
            XCTAssertEqual(call.status, 0, call.stderr)
        } else {
            XCTAssertTrue(call.stderr.contains("AccessDenied"), "only the group audio calls: \(call.stderr)")
        }
        _ = try stop(daemon)

        let bare = try PrivateBus(.system)
        let refused = try RunningProgram(
            "media-daemon", ["--mpris", "--mpris-bus", "system", media[0].path], environment: bare.environment
        ).finish(timeout: 30)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("media-daemon-mpris.conf"), refused.stderr)
    }

    /// The names of the groups of `user`.
    private func getgrouplist(user: String) -> [String] {
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: 64)
        guard Glibc.getgrouplist(user, getegid(), &groups, &count) >= 0 else { return [] }
        return groups.prefix(Int(count)).compactMap { getgrgid($0).map { String(cString: $0.pointee.gr_name) } }
    }
}
