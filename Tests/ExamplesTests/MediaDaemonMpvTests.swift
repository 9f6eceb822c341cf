import Foundation
import Glibc
import TestSupport
import XCTest

/// mpv's JSON IPC on `media-daemon --control`: the same client script run against mpv and
/// against the daemon, and the rest of it through a client of the test's own.
final class MediaDaemonMpvTests: XCTestCase {
    override func tearDown() {
        for directory in ControlClient.madeDirectories.withLock({ list in
            defer { list = [] }; return list
        }) {
            try? FileManager.default.removeItem(atPath: directory)
        }
        super.tearDown()
    }

    /// The mpv client script (Examples/mpv-ipc).
    private var script: String { repositoryRoot.appendingPathComponent("Examples/mpv-ipc/mpv_ipc_check.py").path }

    /// The script's media: two long WAVs and a file that is no media.
    private func scriptMedia() throws -> [String] {
        [
            try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "long.wav").path,
            try TestMedia.randomBytes(count: 5000, name: "broken.wav").path,
            try TestMedia.wav(seconds: 30, sampleRate: 8000, frequency: 660, name: "other.wav").path,
        ]
    }

    // MARK: The client script, against both

    func testMpvClientScript_whenRunAgainstMediaDaemon_passesAndQuitsTheDaemon() throws {
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let result = try runTool("/usr/bin/python3", [script, path] + (try scriptMedia()), timeout: 60)
        XCTAssertEqual(result.status, 0, "the script against media-daemon:\n\(result.stdout)\(result.stderr)")
        XCTAssertTrue(result.stdout.contains("every check passed"), result.stdout)
        // Its quit ends the daemon as SIGTERM does.
        let exit = try daemon.finish(timeout: 30)
        XCTAssertEqual(exit.status, 0, exit.stderr)
        let log = try DaemonLog(text: exit.stdout)
        XCTAssertEqual(log.playbackViolations(), [])
        XCTAssertEqual(log.events("PlaybackEnded").last?["reason"] as? String, "quit", "\(log.events("PlaybackEnded"))")
        XCTAssertEqual(log.events("PlaybackEnded").filter { $0["reason"] as? String == "failed" }.count, 1)
        XCTAssertEqual(eventName(log.lines.last), "Exited")
    }

    func testMpvClientScript_whenRunAgainstMpv_passes() throws {
        let path = try testSocketPath("mpv.sock")
        let mpv = try MpvProcess(path: path)
        let result = try runTool("/usr/bin/python3", [script, path] + (try scriptMedia()), timeout: 60)
        XCTAssertEqual(result.status, 0, "the script against mpv:\n\(result.stdout)\(result.stderr)")
        XCTAssertTrue(result.stdout.contains("every check passed"), result.stdout)
        XCTAssertTrue(mpv.waitForExit(timeout: 30), "mpv quits at the script's quit")
    }

    /// Entries that play to their end, with `playlist-pos` observed: the daemon sends
    /// `end-file`, `start-file` and the property's change in mpv's order, at each move from
    /// one entry to the next and at the playlist's end.
    func testEntriesPlayingToTheirEnd_sendEndFileStartFileAndPlaylistPosInMpvsOrder() throws {
        let files = try (1...3).map { try TestMedia.wav(seconds: 0.3, sampleRate: 8000, name: "order\($0).wav") }
        func sequence(_ client: MpvTestClient) throws -> [String] {
            _ = try client.ok("observe_property", 1, "playlist-pos")
            _ = try client.ok("loadfile", files[0].path)
            for file in files.dropFirst() { _ = try client.ok("loadfile", file.path, "append") }
            let last = files.count
            let untilLastEnd = try XCTUnwrap(
                client.events(through: "end-file") { $0["playlist_entry_id"] as? Int == last }, "entry \(last)'s end")
            func isIdlePosition(_ event: [String: Any]) -> Bool {
                event["event"] as? String == "property-change" && event["id"] as? Int == 1
                    && event["data"] as? Int == -1
            }
            // Not waited for when it came before that end, after the first (as in mpv it does
            // not); the value sent at the observation is -1 too.
            let afterFirstEnd = untilLastEnd.drop { $0["event"] as? String != "end-file" }
            let untilIdle =
                afterFirstEnd.contains(where: isIdlePosition)
                ? []
                : try XCTUnwrap(client.events(through: "property-change", isIdlePosition), "the playlist's end")
            let names: [String] = (untilLastEnd + untilIdle).compactMap { event in
                switch event["event"] as? String {
                case "end-file": "end-file \(event["playlist_entry_id"] ?? "?") \(event["reason"] ?? "?")"
                case "start-file": "start-file \(event["playlist_entry_id"] ?? "?")"
                case "property-change" where event["id"] as? Int == 1: "playlist-pos \(event["data"] ?? "none")"
                default: nil
                }
            }
            // From the first end on: at the first start, mpv's order of `start-file` and the
            // property's change depends on when it handles the observation.
            return Array(names.drop { !$0.hasPrefix("end-file") })
        }
        let mpvPath = try testSocketPath("mpv.sock")
        let mpv = try MpvProcess(path: mpvPath)
        let mpvClient = try MpvTestClient(path: mpvPath)
        let expected = try sequence(mpvClient)
        _ = try mpvClient.ok("quit")
        XCTAssertTrue(mpv.waitForExit(timeout: 30), "mpv quits")
        XCTAssertTrue(expected.contains("end-file 1 eof"), "mpv's own sequence: \(expected)")

        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let client = try MpvTestClient(path: path)
        XCTAssertEqual(try sequence(client), expected)
        _ = try client.ok("quit")
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    /// The lines queued together go out in one `send`: an entry's `end-file` and the next
    /// `start-file` reach the client in one read, as mpv's do (sent one `send` per line, a
    /// client that woke between them saw a gap mpv does not have).
    func testEndFileAndTheNextStartFile_reachTheClientInOneRead() throws {
        let files = try (1...4).map { try TestMedia.wav(seconds: 0.3, sampleRate: 8000, name: "pair\($0).wav") }
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let client = try ControlClient(path: path)
        let commands = [["loadfile", files[0].path]] + files.dropFirst().map { ["loadfile", $0.path, "append"] }
        for (index, command) in commands.enumerated() {
            // Ids of their own: the client's `request` below counts from 1.
            let data = try JSONSerialization.data(withJSONObject: ["command": command, "request_id": 101 + index])
            try client.sendRaw(String(decoding: data, as: UTF8.self) + "\n")
        }
        // Each `end-file` of an entry that played to its end, by entry: where its line starts.
        var endFileStarts: [Int: Int] = [:]
        var pairs = 0
        while pairs < files.count - 1 {
            let start = client.consumedBytes
            let line = try XCTUnwrap(client.nextLine(timeout: 30), "the start of entry \(pairs + 2)")
            let event = try parseJSONObject(line)
            let entry = event["playlist_entry_id"] as? Int ?? 0
            switch event["event"] as? String {
            case "end-file":
                XCTAssertEqual(event["reason"] as? String, "eof", line)
                endFileStarts[entry] = start
            case "start-file" where entry > 1:
                let endFileStart = try XCTUnwrap(endFileStarts[entry - 1], "entry \(entry - 1)'s end-file first")
                let end = client.consumedBytes
                let reads = client.readEnds.filter { $0 > endFileStart && $0 < end }
                XCTAssertEqual(reads, [], "entry \(entry - 1)'s end-file and entry \(entry)'s start-file: two reads")
                pairs += 1
            default: break
            }
        }
        _ = try client.request("quit")
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    // MARK: mpv's form, details the script leaves to the player

    func testMpvForm_whenAnEntryFails_endFileSaysErrorWithTheDaemonsCause() throws {
        let good = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "good.wav")
        let missing = try TestMedia.missing(name: "gone.wav")
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let client = try MpvTestClient(path: path)
        let loaded = try client.ok("loadfile", missing.path)
        XCTAssertEqual((loaded["data"] as? [String: Any])?["playlist_entry_id"] as? Int, 1, "\(loaded)")
        // append-play: the missing entry may have failed already (the playlist ended).
        _ = try client.ok("loadfile", good.path, "append-play")
        let failed = try XCTUnwrap(client.waitForEvent("end-file") { $0["playlist_entry_id"] as? Int == 1 })
        XCTAssertEqual(failed["reason"] as? String, "error")
        XCTAssertEqual(failed["file_error"] as? String, "loading failed")
        XCTAssertEqual(failed["daemon_reason"] as? String, "failed")
        XCTAssertTrue((failed["cause"] as? String)?.contains("No such file or directory") == true, "\(failed)")
        XCTAssertNotNil(failed["playback"] as? Int)
        XCTAssertNotNil(failed["seq"] as? Int, "the PlaybackEnded line's seq")
        XCTAssertNotNil(client.waitForEvent("file-loaded") { $0["playlist_entry_id"] as? Int == 2 })
        // Properties in mpv's types, observers coalesced to one change per value.
        _ = try client.ok("observe_property", 7, "volume")
        XCTAssertEqual(client.waitForEvent("property-change") { $0["id"] as? Int == 7 }?["data"] as? Double, 100)
        _ = try client.ok("set_property", "volume", 40)
        XCTAssertEqual(client.waitForEvent("property-change") { $0["id"] as? Int == 7 }?["data"] as? Double, 40)
        XCTAssertEqual(
            try client.request("set_property", "volume", 500)["error"] as? String, "error accessing property")
        XCTAssertEqual(try client.request("set_property", "duration", 1)["error"] as? String, "property unavailable")
        let tracks = try XCTUnwrap(try client.ok("get_property", "track-list")["data"] as? [[String: Any]])
        XCTAssertEqual(tracks.first?["type"] as? String, "audio")
        XCTAssertEqual(tracks.first?["selected"] as? Bool, true)
        XCTAssertEqual(try client.ok("get_property", "aid")["data"] as? Int, 1)
        _ = try client.ok("set_property", "aid", "no")
        XCTAssertTrue(try waitUntil(30) { try client.ok("get_property", "aid")["data"] as? Bool == false }, "aid no")
        _ = try client.ok("set_property", "speed", 2)
        XCTAssertEqual(try client.ok("get_property", "speed")["data"] as? Double, 2)
        _ = try client.ok("stop")
        XCTAssertNotNil(client.waitForEvent("idle") { _ in true }, "stop clears the playlist: idle")
        XCTAssertEqual(try client.ok("get_property", "playlist-count")["data"] as? Int, 0)
        _ = try client.ok("quit", 3)
        XCTAssertNotNil(client.waitForEvent("shutdown") { _ in true })
        let exit = try daemon.finish(timeout: 30)
        XCTAssertEqual(exit.status, 3, "quit 3: the daemon's exit status")
    }

    /// mpv sends `end-file` once the file is unloaded, so a client may move or delete it
    /// then. An entry that plays to its end while the playlist goes on is closed by libvlc
    /// only when the next entry replaces it: its `end-file` waits for that, and comes before
    /// the next `start-file`.
    func testEndFile_whenAnEntryPlaysToItsEnd_comesOnceTheFileIsClosed() throws {
        let files = try (1...4).map { try TestMedia.wav(seconds: 0.3, sampleRate: 8000, name: "entry\($0).wav") }
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let client = try MpvTestClient(path: path)
        _ = try client.ok("loadfile", files[0].path)
        for file in files.dropFirst() { _ = try client.ok("loadfile", file.path, "append") }
        for entry in 1..<files.count {
            let ended = try XCTUnwrap(
                client.waitForEvent("end-file") { $0["playlist_entry_id"] as? Int == entry }, "entry \(entry)")
            XCTAssertEqual(ended["reason"] as? String, "eof")
            let open = Self.openFiles(of: daemon.process.processIdentifier)
            XCTAssertFalse(
                open.contains(files[entry - 1].path), "entry \(entry)'s file still open at its end-file: \(open)")
            let next = try XCTUnwrap(client.waitForEvent("start-file") { _ in true }, "after entry \(entry)")
            XCTAssertEqual(next["playlist_entry_id"] as? Int, entry + 1)
        }
        _ = try client.ok("quit")
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    /// The paths `pid` has open, from `/proc/PID/fd`.
    private static func openFiles(of pid: Int32) -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(
            names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)") })
    }

    /// libvlc reports no time while paused (not even its echo of a seek's target): a seek made
    /// then is restarted at once, and time-pos reads the target, as with mpv; playing on
    /// continues from there.
    func testSeek_whilePaused_restartsAtOnceAndTimePosReadsTheTarget() throws {
        let wav = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "paused.wav")
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let client = try MpvTestClient(path: path)
        _ = try client.ok("loadfile", wav.path)
        XCTAssertNotNil(client.waitForEvent("file-loaded") { _ in true })
        _ = try client.ok("observe_property", 1, "pause")
        _ = try client.ok("set_property", "pause", true)
        XCTAssertNotNil(client.waitForEvent("property-change") { $0["id"] as? Int == 1 && $0["data"] as? Bool == true })
        for (round, target) in [12.0, 21.5, 3.25].enumerated() {
            _ = try client.ok("seek", target, "absolute")
            XCTAssertNotNil(client.waitForEvent("seek") { _ in true }, "round \(round)")
            XCTAssertNotNil(client.waitForEvent("playback-restart") { _ in true }, "round \(round): paused")
            XCTAssertEqual(try client.ok("get_property", "time-pos")["data"] as? Double, target, "round \(round)")
            XCTAssertEqual(try client.ok("get_property", "pause")["data"] as? Bool, true, "round \(round)")
        }
        _ = try client.ok("set_property", "pause", false)
        XCTAssertTrue(
            try waitUntil(30) {
                (try client.ok("get_property", "time-pos")["data"] as? Double).map { $0 > 3.25 && $0 < 10 } ?? false
            }, "playing on from 3.25 s")
        _ = try client.ok("quit")
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    func testPlaylistEdits_inBothForms_changeTheEntriesAsMpvSays() throws {
        let names = ["a.wav", "b.wav", "c.wav", "d.wav"]
        let media = try names.map { try TestMedia.wav(seconds: 30, sampleRate: 8000, name: $0).path }
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress"])
        let mpv = try MpvTestClient(path: path)
        func files() throws -> [String] {
            let list = try XCTUnwrap(try mpv.ok("get_property", "playlist")["data"] as? [[String: Any]])
            return list.compactMap { ($0["filename"] as? String).map { String($0.split(separator: "/").last!) } }
        }
        _ = try mpv.ok("loadfile", media[0])
        _ = try mpv.ok("loadfile", media[1], "append")
        _ = try mpv.ok("loadfile", media[2], "insert-next")
        XCTAssertEqual(try files(), ["a.wav", "c.wav", "b.wav"], "insert-next: after the current entry")
        // mpv: index1 takes the place of the entry at index2.
        _ = try mpv.ok("playlist-move", 2, 0)
        XCTAssertEqual(try files(), ["b.wav", "a.wav", "c.wav"])
        _ = try mpv.ok("playlist-move", 0, 3)
        XCTAssertEqual(try files(), ["a.wav", "c.wav", "b.wav"], "index2 past the last: to the end")
        XCTAssertEqual(try mpv.request("playlist-move", 0, 9)["error"] as? String, "error running command")
        _ = try mpv.ok("playlist-play-index", 2)
        XCTAssertNotNil(mpv.waitForEvent("file-loaded") { $0["playlist_entry_id"] as? Int == 2 }, "b.wav plays")
        _ = try mpv.ok("playlist-clear")
        XCTAssertEqual(try files(), ["b.wav"], "playlist-clear keeps the entry playing")
        // The daemon's own form, on the same connection.
        let native = try ControlClient(path: path)
        XCTAssertEqual(
            try native.request("load", ["entries": [media[3], media[0]], "mode": "append"])["ok"] as? Bool, true)
        XCTAssertEqual(try native.request("move", ["item": 3, "to_item": 1])["ok"] as? Bool, true)
        XCTAssertEqual(try files(), ["a.wav", "b.wav", "d.wav"])
        XCTAssertEqual(try native.request("remove", ["item": 3])["ok"] as? Bool, true)
        XCTAssertEqual(try files(), ["a.wav", "b.wav"])
        XCTAssertEqual(try native.request("speed", ["speed": 1.5])["ok"] as? Bool, true)
        XCTAssertEqual(try mpv.ok("get_property", "speed")["data"] as? Double, 1.5)
        XCTAssertEqual(try native.request("clear")["ok"] as? Bool, true)
        XCTAssertEqual(try files(), [])
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    // MARK: Catch-up

    func testSubscribeSince_whenAClientReconnects_getsTheLinesItMissedFirst() throws {
        let first = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "one.wav")
        let second = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "two.wav")
        let path = try testSocketPath()
        let daemon = try RunningProgram(
            "media-daemon", ["--control", path, "--no-progress", "--catch-up", "200", first.path, second.path])
        var client: ControlClient? = try ControlClient(path: path)
        // Since 0: from the first line, whenever the client connected.
        XCTAssertEqual(try client!.request("subscribe", ["since": 0])["ok"] as? Bool, true)
        let began = try XCTUnwrap(client!.waitForEvent(timeout: 30) { eventName($0) == "PlaybackBegan" })
        let lastRead = try XCTUnwrap(began["seq"] as? Int)
        client = nil
        // While no client listens: a next, its PlaybackEnded and PlaybackBegan.
        let other = try ControlClient(path: path)
        XCTAssertEqual(try other.request("next")["ok"] as? Bool, true)
        XCTAssertTrue(
            try waitUntil(30) { try other.request("status")["playback"] as? Int == 2 }, "the second entry plays")
        let missedUpTo = try XCTUnwrap(try other.request("status")["control"] as? [String: Any])["last_seq"] as! Int

        let back = try ControlClient(path: path)
        let reply = try back.request("subscribe", ["since": lastRead])
        XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
        XCTAssertEqual(reply["lost"] as? Int, 0)
        // The status says the second entry plays from the moment its playback begins, before
        // its PlaybackBegan line is written: read up to that line, and at least to the last
        // line the status counted.
        var seqs: [Int] = []
        var secondBegan = false
        while !secondBegan || seqs.last.map({ $0 < missedUpTo }) ?? true,
            let line = back.waitForEvent(timeout: 30, { $0["seq"] is Int })
        {
            seqs.append(line["seq"] as! Int)
            if eventName(line) == "PlaybackBegan" && line["playback"] as? Int == 2 { secondBegan = true }
        }
        XCTAssertEqual(seqs.first, lastRead + 1, "the first line after the last one read")
        XCTAssertEqual(seqs, Array((lastRead + 1)...(seqs.last ?? lastRead)), "every line, in order, once")
        let replayed = back.events.compactMap { try? parseJSONObject($0) }
        XCTAssertTrue(replayed.contains { eventName($0) == "PlaybackEnded" && $0["playback"] as? Int == 1 })
        XCTAssertTrue(replayed.contains { eventName($0) == "PlaybackBegan" && $0["playback"] as? Int == 2 })

        // Older than the ring: one line says how many are gone, then what is kept.
        let late = try ControlClient(path: path)
        let small = try late.request("subscribe", ["since": 0, "events": ["PlaybackBegan"]])
        XCTAssertEqual(small["ok"] as? Bool, true, "\(small)")
        XCTAssertEqual(small["lost"] as? Int, 0, "the ring (200) still holds every line")
        XCTAssertEqual(late.waitForEvent(timeout: 30) { eventName($0) == "PlaybackBegan" }?["playback"] as? Int, 1)
        XCTAssertEqual(
            try other.request("subscribe", ["since": missedUpTo + 100_000])["ok"] as? Bool, false,
            "a seq past the last line is an error")
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    func testSubscribeSince_whenTheRingNoLongerHoldsTheLines_saysHowManyWereLost() throws {
        let media = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "one.wav")
        let path = try testSocketPath()
        let daemon = try RunningProgram(
            "media-daemon", ["--control", path, "--no-progress", "--catch-up", "5", media.path])
        let client = try ControlClient(path: path)
        XCTAssertTrue(try waitUntil(30) { try client.request("status")["state"] as? String == "playing" })
        let reply = try client.request("subscribe", ["since": 0])
        let last = try XCTUnwrap(reply["seq"] as? Int)
        XCTAssertEqual(reply["lost"] as? Int, last - 5, "\(reply)")
        XCTAssertEqual(reply["replayed"] as? Int, 5)
        let lost = try XCTUnwrap(client.waitForEvent(timeout: 30) { eventName($0) == "LinesLost" })
        XCTAssertEqual(lost["lost"] as? Int, last - 5)
        XCTAssertEqual(lost["first_kept_seq"] as? Int, last - 4)
        let kept = try XCTUnwrap(client.waitForEvent(timeout: 30) { $0["seq"] is Int })
        XCTAssertEqual(kept["seq"] as? Int, last - 4, "then the lines the ring keeps")
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    // MARK: Operator slot, idle clients

    func testOperatorSlot_when64IdleClientsAreConnected_statusStillGetsIn() throws {
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path])
        let idle = try (0..<64).map { _ in try ControlClient(path: path) }
        XCTAssertTrue(
            try waitUntil(30) {
                let status = try runProgram("media-events", ["ctl", "--socket", path, "status"], timeout: 30)
                guard status.status == 0, let reply = try? parseJSONObject(status.stdout) else { return false }
                let control = reply["control"] as? [String: Any] ?? [:]
                return control["clients"] as? Int == 64
                    && (control["client"] as? [String: Any])?["operator"] as? Bool == true
            }, "ctl status gets in beside 64 clients, on the operator's connection")
        // While the operator's connection is taken, a further client reads why it is refused.
        let holder = try ControlClient(path: path)
        XCTAssertTrue(
            try waitUntil(30) {
                let refused = try runProgram("media-events", ["ctl", "--socket", path, "status"], timeout: 30)
                return refused.status == 1 && refused.stderr.contains("too many clients")
            }, "ctl prints the reason a refused connection got")
        let extra = try ControlClient(path: path)
        let line = try XCTUnwrap(extra.nextLine(timeout: 30), "a refused client reads a line")
        XCTAssertTrue(line.contains("too many clients"), line)
        // The operator's connection answers one request, then closes.
        let reply = try holder.request("status")
        XCTAssertEqual((reply["control"] as? [String: Any])?["clients"] as? Int, 64)
        XCTAssertNotNil(holder.readToEnd(timeout: 30), "closed after its reply")
        XCTAssertEqual(try runProgram("media-events", ["ctl", "--socket", path, "status"], timeout: 30).status, 0)
        withExtendedLifetime(idle) {}
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    func testClientTimeout_whenAClientSendsNothing_itIsDisconnectedButASubscriberStays() throws {
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--client-timeout", "1"])
        let subscriber = try ControlClient(path: path)
        XCTAssertEqual(try subscriber.request("subscribe")["ok"] as? Bool, true)
        let mpvClient = try MpvTestClient(path: path)
        _ = try mpvClient.ok("get_version")
        let quiet = try ControlClient(path: path)
        let lines = try XCTUnwrap(quiet.readToEnd(timeout: 30), "an idle client is disconnected")
        XCTAssertTrue(lines.last?.contains("idle: no request for 1 s") == true, "\(lines)")
        let status = try subscriber.request("status")
        let control = try XCTUnwrap(status["control"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(control["clients_disconnected_idle"] as? Int ?? 0, 1)
        XCTAssertEqual(try mpvClient.ok("get_property", "idle-active")["data"] as? Bool, true, "mpv's client stays")
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }

    // MARK: Log file, events outside playbacks, ctl

    func testLogFile_whenCreated_hasMode0600OrTheModeGiven() throws {
        let media = try TestMedia.wav(seconds: 0.2, sampleRate: 8000, name: "short.wav")
        let directory = try TestMedia.directory(name: "logs")
        for (options, mode) in [([String](), 0o600), (["--log-mode", "0640"], 0o640)] {
            let file = directory.appendingPathComponent("daemon-\(mode).log").path
            let result = try runProgram(
                "media-daemon", ["--log", file, "--exit-at-end", "--untimed"] + options + [media.path], timeout: 60)
            XCTAssertEqual(result.status, 0, result.stderr)
            var info = stat()
            XCTAssertEqual(stat(file, &info), 0)
            XCTAssertEqual(Int(info.st_mode & 0o777), mode, "\(options): the new log's mode")
            XCTAssertTrue(try String(contentsOfFile: file, encoding: .utf8).contains("\"Exited\""))
            // A log that exists keeps the mode its owner gave it.
            chmod(file, 0o644)
            XCTAssertEqual(
                try runProgram("media-daemon", ["--log", file, "--exit-at-end", "--untimed", media.path]).status, 0)
            XCTAssertEqual(stat(file, &info), 0)
            XCTAssertEqual(Int(info.st_mode & 0o777), 0o644)
        }
        let bad = try runProgram("media-daemon", ["--log-mode", "0400", media.path], timeout: 30)
        XCTAssertEqual(bad.status, 2, "a mode the daemon cannot write with is a usage error")
    }

    func testPlayerEventsOutsidePlaybacks_whenMediaChanges_areLoggedOnceWithoutPlayback() throws {
        let media = try TestMedia.wav(seconds: 0.2, sampleRate: 8000, name: "short.wav")
        // Each mode twice: whether an event had a playback is decided on libvlc's threads and
        // the control queue at once.
        for dispatch in ["inline", "queue-async", "queue-sync", "inline", "queue-async", "queue-sync"] {
            let result = try runProgram(
                "media-daemon",
                ["--exit-at-end", "--untimed", "--dispatch", dispatch] + Array(repeating: media.path, count: 4),
                timeout: 60)
            XCTAssertEqual(result.status, 0, result.stderr)
            let log = try DaemonLog(text: result.stdout)
            let changes = log.events("MediaPlayerMediaChanged")
            XCTAssertEqual(changes.count, 4, "\(dispatch): one MediaChanged per entry: \(changes)")
            XCTAssertTrue(changes.allSatisfy { $0["playback"] == nil && $0["entry_id"] == nil }, "\(dispatch)")
            XCTAssertEqual(log.playbackViolations(), [], dispatch)
            let tagged = log.lines.filter { ($0["source"] as? String) == "player" && $0["playback"] != nil }
            XCTAssertFalse(tagged.isEmpty, "\(dispatch): the playbacks' own events keep their tags")
        }
    }

    func testCtl_getSetObserve_speakMpvsProperties() throws {
        let media = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "one.wav")
        let path = try testSocketPath()
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress", media.path, media.path])
        func ctl(_ arguments: [String]) throws -> ProgramResult {
            try runProgram("media-events", ["ctl", "--socket", path] + arguments, timeout: 30)
        }
        XCTAssertTrue(try waitUntil(30) { try ctl(["status"]).status == 0 }, "the daemon listens")
        let observer = try RunningProgram("media-events", ["ctl", "--socket", path, "observe", "volume,playlist-pos"])
        XCTAssertNotNil(observer.waitForLine(timeout: 30) { $0.contains(#""name":"volume","data":100"#) })
        let set = try ctl(["set", "volume", "55"])
        XCTAssertEqual(set.status, 0, set.stdout + set.stderr)
        let get = try ctl(["get", "volume"])
        XCTAssertEqual(get.status, 0)
        XCTAssertEqual(try parseJSONObject(get.stdout)["data"] as? Double, 55)
        XCTAssertNotNil(observer.waitForLine(timeout: 30) { $0.contains(#""name":"volume","data":55"#) })
        XCTAssertEqual(try ctl(["get", "no-such-property"]).status, 1)
        XCTAssertEqual(try ctl(["play", "--entry", "2"]).status, 0)
        XCTAssertNotNil(observer.waitForLine(timeout: 30) { $0.contains(#""name":"playlist-pos","data":1"#) })
        XCTAssertEqual(try ctl(["play", "--entry", "9"]).status, 1, "no entry 9")
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
        let watched = try observer.finish(timeout: 30)
        XCTAssertEqual(watched.status, 0, "observe ends when the daemon closes: \(watched.stderr)")
    }
}

/// Debian's mpv, idle, without sound or video, serving its JSON IPC on `path`; killed when
/// dropped unless it has exited.
private final class MpvProcess {
    private let process = Process()
    private let ended = DispatchSemaphore(value: 0)

    init(path: String) throws {
        let mpv = "/usr/bin/mpv"
        guard FileManager.default.isExecutableFile(atPath: mpv) else {
            throw ProgramFailure(description: "\(mpv) is missing: Scripts/install-deps.sh installs Debian's mpv")
        }
        process.executableURL = URL(fileURLWithPath: mpv)
        process.arguments = [
            "--idle", "--no-terminal", "--no-config", "--ao=null", "--vo=null", "--input-ipc-server=\(path)",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let ended = ended
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
    }

    func waitForExit(timeout: Double) -> Bool { ended.wait(timeout: .now() + timeout) == .success }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            _ = ended.wait(timeout: .now() + 10)
        }
    }
}

/// A client of mpv's form: `{"command":[...],"request_id":N}`, events kept until looked at.
private final class MpvTestClient {
    private let connection: ControlClient
    private var nextID = 1
    private var events: [[String: Any]] = []

    init(path: String) throws { connection = try ControlClient(path: path) }

    func request(_ command: Any...) throws -> [String: Any] { try send(command) }

    /// A request that must answer "success".
    func ok(_ command: Any...) throws -> [String: Any] {
        let reply = try send(command)
        guard reply["error"] as? String == "success" else {
            throw ProgramFailure(description: "\(command) answered \(reply)")
        }
        return reply
    }

    private func send(_ command: [Any]) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        let data = try JSONSerialization.data(withJSONObject: ["command": command, "request_id": id])
        try connection.sendRaw(String(decoding: data, as: UTF8.self) + "\n")
        while let line = connection.nextLine(timeout: 30) {
            let object = try parseJSONObject(line)
            if object["event"] != nil {
                events.append(object)
            } else if object["request_id"] as? Int == id {
                return object
            }
        }
        throw ProgramFailure(description: "no reply to \(command)")
    }

    /// The first event `name` satisfying `predicate` (earlier ones are dropped); `nil` after 30 s.
    func waitForEvent(_ name: String, _ predicate: ([String: Any]) -> Bool) -> [String: Any]? {
        events(through: name, predicate)?.last
    }

    /// The events up to and including the first event `name` satisfying `predicate`, in the
    /// order they came; `nil` after 30 s.
    func events(through name: String, _ predicate: ([String: Any]) -> Bool) -> [[String: Any]]? {
        var seen: [[String: Any]] = []
        while !events.isEmpty {
            let event = events.removeFirst()
            seen.append(event)
            if event["event"] as? String == name && predicate(event) { return seen }
        }
        let deadline = Date().addingTimeInterval(30)
        while let line = connection.nextLine(timeout: deadline.timeIntervalSinceNow) {
            guard let event = try? parseJSONObject(line), event["event"] != nil else { continue }
            seen.append(event)
            if event["event"] as? String == name && predicate(event) { return seen }
        }
        return nil
    }
}
