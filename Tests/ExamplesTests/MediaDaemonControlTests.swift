import Foundation
import Glibc
import TestSupport
import XCTest

/// `media-daemon --control PATH` driven as a user would: clients on its Unix socket,
/// `media-events ctl`, systemd's notify socket.
final class MediaDaemonControlTests: XCTestCase {
    override func tearDown() {
        for directory in ControlClient.madeDirectories.withLock({ list in
            defer { list = [] }; return list
        }) {
            try? FileManager.default.removeItem(atPath: directory)
        }
        super.tearDown()
    }

    /// A daemon playing `media` with `--control` on a fresh socket path.
    private func startDaemon(
        _ media: [URL], _ options: [String] = ["--no-progress"],
        environment: [String: String] = [:]
    ) throws -> (RunningProgram, String) {
        let path = try testSocketPath()
        let daemon = try RunningProgram(
            "media-daemon", ["--control", path] + options + media.map(\.path),
            environment: environment)
        return (daemon, path)
    }

    private func ok(_ reply: [String: Any], _ message: String = "", line: UInt = #line) {
        XCTAssertEqual(reply["ok"] as? Bool, true, "\(message) \(reply)", line: line)
        XCTAssertNil(reply["error"], "\(message) \(reply)", line: line)
    }

    private func error(_ reply: [String: Any], contains text: String, line: UInt = #line) {
        XCTAssertEqual(reply["ok"] as? Bool, false, "\(reply)", line: line)
        XCTAssertTrue((reply["error"] as? String)?.contains(text) == true, "'\(text)' in \(reply)", line: line)
    }

    private func control(_ status: [String: Any]) -> [String: Any] { status["control"] as? [String: Any] ?? [:] }

    /// The `entry` of each entry of a `playlist` reply.
    private func entries(_ playlist: [String: Any]) -> [String] {
        (playlist["entries"] as? [[String: Any]] ?? []).compactMap { $0["entry"] as? String }
    }

    /// The `id` of each entry of a `playlist` reply.
    private func ids(_ playlist: [String: Any]) -> [Int] {
        (playlist["entries"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
    }

    /// Ends the daemon with SIGTERM: it exits 0 and removes its socket file.
    private func stop(
        _ daemon: RunningProgram, socket path: String, timeout: Double = 30,
        line: UInt = #line
    ) throws -> ProgramResult {
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: timeout)
        XCTAssertEqual(result.status, 0, result.stderr, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the socket file is removed at exit", line: line)
        return result
    }

    // MARK: Commands

    func testControl_everyCommand_isAnsweredWithItsRequestIDAndActsOnThePlayer() throws {
        let first = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "first.wav")
        let second = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "second.wav")
        let third = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "third.wav")
        let (daemon, path) = try startDaemon([first, second])
        let client = try ControlClient(path: path)
        let subscribed = try client.request(
            "subscribe",
            [
                "events": [
                    "PlaybackBegan", "MediaPlayerPlaying", "Paused", "PlaybackEnded", "Loaded",
                ]
            ])
        ok(subscribed)
        XCTAssertEqual(
            (subscribed["events"] as? [String])?.sorted(),
            ["Loaded", "MediaPlayerPaused", "MediaPlayerPlaying", "PlaybackBegan", "PlaybackEnded"])
        func waitFor(_ name: String, item: Int? = nil, entry: URL? = nil) -> [String: Any]? {
            client.waitForEvent(timeout: 30) { object in
                eventName(object) == name && (item == nil || object["item"] as? Int == item)
                    && (entry == nil || object["entry"] as? String == entry!.path)
            }
        }
        // Subscribed after the start: the first entry may be playing already.
        var status = try client.request("status")
        ok(status)
        if status["state"] as? String != "playing" {
            XCTAssertNotNil(waitFor("MediaPlayerPlaying"), "\(client.events)")
            status = try client.request("status")
        }
        XCTAssertEqual(status["state"] as? String, "playing", "\(status)")
        XCTAssertEqual(status["item"] as? Int, 1)
        XCTAssertEqual(status["entry_id"] as? Int, 1)
        XCTAssertEqual(status["items"] as? Int, 2)
        XCTAssertEqual(control(status)["clients"] as? Int, 1)

        ok(try client.request("pause"))
        XCTAssertNotNil(waitFor("MediaPlayerPaused"), "pause pauses: \(client.events)")
        XCTAssertTrue(try waitUntil(30) { try client.request("status")["paused"] as? Bool == true }, "status: paused")
        ok(try client.request("resume"))
        XCTAssertNotNil(waitFor("MediaPlayerPlaying"), "resume plays again")
        ok(try client.request("seek", ["ms": 1000]))
        ok(try client.request("seek", ["fraction": 0.5]))
        ok(try client.request("volume", ["volume": 80]))

        let moved = try client.request("next")
        ok(moved)
        XCTAssertEqual(moved["item"] as? Int, 2, "next names the entry it moves to: \(moved)")
        XCTAssertEqual(moved["entry_id"] as? Int, 2, "\(moved)")
        XCTAssertNotNil(waitFor("PlaybackBegan", item: 2), "next: \(client.events)")
        error(try client.request("next"), contains: "no next entry")
        let back = try client.request("previous")
        ok(back)
        XCTAssertEqual(back["item"] as? Int, 1, "\(back)")
        XCTAssertNotNil(waitFor("PlaybackBegan", item: 1), "previous: \(client.events)")
        error(try client.request("previous"), contains: "no previous entry")
        ok(try client.request("play", ["item": 2]))
        XCTAssertNotNil(waitFor("PlaybackBegan", item: 2), "play item 2: \(client.events)")
        ok(try client.request("play", ["entry_id": 1]))
        // The playback it replaced ends first, as skipped.
        let skipped = try XCTUnwrap(waitFor("PlaybackEnded"), "\(client.events)")
        XCTAssertEqual(skipped["reason"] as? String, "skipped", "\(skipped)")
        XCTAssertNotNil(waitFor("PlaybackBegan", item: 1, entry: first), "play entry 1: \(client.events)")

        var playlist = try client.request("playlist")
        ok(playlist)
        XCTAssertEqual(entries(playlist), [first.path, second.path])
        XCTAssertEqual(ids(playlist), [1, 2])
        XCTAssertEqual(playlist["item"] as? Int, 1)
        XCTAssertEqual(playlist["entry_id"] as? Int, 1)

        let appended = try client.request("load", ["entries": [third.path], "mode": "append"])
        ok(appended)
        XCTAssertEqual(appended["items"] as? Int, 3)
        XCTAssertEqual(appended["entry_ids"] as? [Int], [3])
        XCTAssertNotNil(waitFor("Loaded"))
        playlist = try client.request("playlist")
        XCTAssertEqual(entries(playlist), [first.path, second.path, third.path])
        ok(try client.request("play", ["item": 3]))
        XCTAssertNotNil(waitFor("PlaybackBegan", item: 3, entry: third), "the appended entry plays")

        let replaced = try client.request("load", ["entries": [second.path]])
        ok(replaced)
        XCTAssertEqual(replaced["items"] as? Int, 1)
        XCTAssertEqual(replaced["entry_ids"] as? [Int], [4], "ids are never reused")
        XCTAssertNotNil(waitFor("PlaybackBegan", item: 1, entry: second), "the new playlist plays")
        XCTAssertEqual(entries(try client.request("playlist")), [second.path])

        ok(try client.request("stop"))
        let stopped = waitFor("PlaybackEnded")
        XCTAssertEqual(stopped?["reason"] as? String, "stopped", "stop stops: \(stopped ?? [:])")
        XCTAssertNotEqual(try client.request("status")["state"] as? String, "playing")
        ok(try client.request("play"))
        XCTAssertNotNil(waitFor("MediaPlayerPlaying"), "play after stop plays")

        // The request_id comes back as it was sent, a string too.
        try client.sendRaw(#"{"command":"bogus","request_id":"abc-1"}"# + "\n")
        let unknown = try parseJSONObject(try XCTUnwrap(client.nextLine(timeout: 30)))
        XCTAssertEqual(unknown["request_id"] as? String, "abc-1")
        error(unknown, contains: "unknown command 'bogus'")

        let unsubscribed = try client.request("unsubscribe")
        ok(unsubscribed)
        XCTAssertEqual(unsubscribed["events"] as? [String], [])
        let before = client.events.count
        ok(try client.request("play", ["item": 1]))
        ok(try client.request("status"))
        XCTAssertEqual(client.events.count, before, "no events once unsubscribed: \(client.events.dropFirst(before))")

        _ = try stop(daemon, socket: path)
    }

    func testControl_whenBadRequests_answersEachWithAnErrorAndKeepsTheConnection() throws {
        let (daemon, path) = try startDaemon([try TestMedia.wav(seconds: 30, sampleRate: 8000)])
        let client = try ControlClient(path: path)
        func rawReply(_ text: String) throws -> [String: Any] {
            try client.sendRaw(text + "\n")
            return try parseJSONObject(try XCTUnwrap(client.nextLine(timeout: 30), "a reply to \(text)"))
        }
        let malformed = try rawReply("{not json")
        error(malformed, contains: "malformed JSON")
        XCTAssertTrue(malformed.keys.contains("request_id"), "request_id null when it cannot be read: \(malformed)")
        error(try rawReply("[1,2]"), contains: "JSON object")
        error(try rawReply(#""status""#), contains: "JSON object")
        error(try rawReply(String(repeating: "[", count: 60_000)), contains: "malformed JSON")
        error(try rawReply(#"{"request_id":3}"#), contains: "command")
        error(try rawReply(#"{"request_id":4,"command":7}"#), contains: "command")

        // 100 KiB in one line, then 70 KiB sent in pieces before its newline: one error each.
        try client.sendRaw(String(repeating: "x", count: 100 * 1024) + "\n")
        let long = try parseJSONObject(try XCTUnwrap(client.nextLine(timeout: 30)))
        error(long, contains: "longer than 65536 bytes")
        for _ in 0..<7 {
            try client.sendRaw(#"{"command":"status","padding":""# + String(repeating: "y", count: 10_000))
        }
        try client.sendRaw("\"}\n")
        error(try parseJSONObject(try XCTUnwrap(client.nextLine(timeout: 30))), contains: "longer than")
        ok(try client.request("status"), "the connection is kept after an oversized line")

        error(try client.request("volume", ["volume": "loud"]), contains: "volume")
        error(try client.request("volume", ["volume": 201]), contains: "0 to 200")
        error(try client.request("volume", ["volume": true]), contains: "volume")
        error(try client.request("seek", [:]), contains: "\"ms\" or \"fraction\"")
        error(try client.request("seek", ["ms": -1]), contains: "ms")
        error(try client.request("seek", ["fraction": 1.5]), contains: "fraction")
        error(try client.request("seek", ["ms": 1, "fraction": 0.5]), contains: "one of them")
        error(try client.request("play", ["item": 0]), contains: "from 1 to 1")
        error(try client.request("play", ["item": 2]), contains: "from 1 to 1")
        error(try client.request("play", ["item": 1.5]), contains: "whole number")
        error(try client.request("play", ["entry_id": 9]), contains: "no entry 9")
        error(try client.request("play", ["item": 1, "entry_id": 1]), contains: "one of them")
        error(try client.request("load", ["entries": []]), contains: "entries")
        error(try client.request("load", ["entries": "x.wav"]), contains: "entries")
        error(try client.request("load", ["entries": ["x.wav"], "mode": "prepend"]), contains: "mode")
        error(try client.request("subscribe", ["events": ["NoSuchEvent"]]), contains: "unknown event 'NoSuchEvent'")
        error(try client.request("subscribe", ["events": "EndReached"]), contains: "list")
        let status = try client.request("status")
        ok(status, "still connected and answering")
        XCTAssertEqual(status["items"] as? Int, 1, "nothing was loaded")
        XCTAssertEqual(entries(try client.request("playlist")).count, 1)

        let result = try stop(daemon, socket: path)
        XCTAssertEqual(result.stderr, "", "no crash, no message")
    }

    func testControl_whenTooManyClients_refusesTheExtraOneWithALineAndIdleOnesCostNothing() throws {
        let (daemon, path) = try startDaemon([try TestMedia.wav(seconds: 30, sampleRate: 8000)])
        // 64 idle clients: never a command, never a read.
        var idle = try (0..<64).map { _ in try ControlClient(path: path) }
        // The 65th is the operator's connection (MediaDaemonMpvTests); the one after is refused.
        let operatorConnection = try ControlClient(path: path)
        let extra = try ControlClient(path: path)
        let refusal = try XCTUnwrap(extra.readToEnd(timeout: 30), "the extra client is closed")
        XCTAssertEqual(refusal.count, 1, "\(refusal)")
        let line = try parseJSONObject(try XCTUnwrap(refusal.first))
        XCTAssertEqual(eventName(line), "Disconnected")
        XCTAssertTrue((line["reason"] as? String)?.contains("too many clients (at most 64)") == true, "\(line)")
        // One of the idle ones still gets answered, and a freed place is taken again.
        let status = try idle[0].request("status")
        ok(status)
        XCTAssertEqual(control(status)["clients"] as? Int, 64)
        XCTAssertEqual(control(status)["clients_refused"] as? Int, 1)
        idle.removeLast(32)
        let again = try ControlClient(path: path)
        var clients = 0
        let deadline = Date().addingTimeInterval(30)
        repeat {
            clients = control(try again.request("status"))["clients"] as? Int ?? -1
            if clients != 33 { usleep(50_000) }
        } while clients != 33 && Date() < deadline
        XCTAssertEqual(clients, 33, "closed clients are forgotten")
        _ = try stop(daemon, socket: path)
        withExtendedLifetime((idle, operatorConnection)) {}
    }

    // MARK: Events to many clients

    func testControl_when32ClientsSubscribeAndCommandWhileItemsPlay_eachGetsItsRepliesAndEveryLineInOrder() throws {
        let media = [try TestMedia.wav(seconds: 1, name: "a.wav"), try TestMedia.wav(seconds: 1, name: "b.wav")]
        let (daemon, path) = try startDaemon(media, ["--loop", "--no-progress"])
        _ = try ControlClient(path: path)  // the socket is up
        struct Outcome: Sendable {
            /// Each reply's request_id, and whether it said ok.
            var replies: [(id: Int?, ok: Bool)] = []
            var events: [String] = []
            var failure: String?
        }
        let outcomes = Locked([Outcome](repeating: Outcome(), count: 32))
        let group = DispatchGroup()
        for index in 0..<32 {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                var outcome = Outcome()
                do {
                    let client = try ControlClient(path: path)
                    func note(_ reply: [String: Any]) {
                        outcome.replies.append((reply["request_id"] as? Int, reply["ok"] as? Bool == true))
                    }
                    note(try client.request("subscribe"))
                    for round in 0..<10 {
                        // A few clients change playback too, while all of them read events.
                        let command = index % 8 == 0 && round == 5 ? "next" : "status"
                        note(try client.request(command))
                    }
                    // Two more ends after the commands: events keep coming to everyone.
                    var ends = 0
                    while ends < 2,
                        let event = client.waitForEvent(timeout: 60, { eventName($0) == "MediaPlayerEndReached" })
                    {
                        _ = event
                        ends += 1
                    }
                    if ends < 2 { outcome.failure = "client \(index): \(ends) EndReached after its commands" }
                    outcome.events = client.events
                } catch {
                    outcome.failure = "client \(index): \(error)"
                }
                let finished = outcome
                outcomes.withLock { $0[index] = finished }
            }
            thread.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 240), .success, "the 32 clients finish")
        let result = try stop(daemon, socket: path)
        let logLines = Set(result.stdoutLines)
        for (index, outcome) in outcomes.withLock({ $0 }).enumerated() {
            XCTAssertNil(outcome.failure)
            XCTAssertEqual(outcome.replies.count, 11, "client \(index)")
            XCTAssertEqual(outcome.replies.compactMap(\.id), Array(1...11), "client \(index)")
            XCTAssertTrue(outcome.replies.allSatisfy(\.ok), "client \(index): \(outcome.replies)")
            // Subscribed to every event and reading: nothing lost, libvlc's order (the log's seq).
            let seqs = outcome.events.compactMap { (try? parseJSONObject($0))?["seq"] as? Int }
            XCTAssertEqual(seqs.count, outcome.events.count)
            XCTAssertGreaterThan(seqs.count, 20, "client \(index)")
            if let low = seqs.first, let high = seqs.last {
                XCTAssertEqual(seqs, Array(low...high), "client \(index): every line, in order")
            }
            let foreign = outcome.events.filter { !logLines.contains($0) }
            XCTAssertEqual(foreign, [], "client \(index): the log's own lines, byte for byte")
        }
    }

    func testControl_whenAClientNeverReads_itIsDroppedWithALastLineAndTheOthersGoOn() throws {
        let (daemon, path) = try startDaemon([try TestMedia.wav(seconds: 0.3)], ["--loop", "--no-progress"])
        let stuck = try ControlClient(path: path)
        ok(try stuck.request("subscribe"))
        let watcher = try ControlClient(path: path)
        ok(try watcher.request("subscribe", ["events": ["MediaPlayerEndReached"]]))
        // Thousands of requests it never reads the replies of, while every event piles up too.
        let flood = Array(String(repeating: #"{"command":"status"}"# + "\n", count: 4000).utf8)
        var offset = 0
        var dropped = false
        let deadline = Date().addingTimeInterval(90)
        while !dropped && Date() < deadline {
            if offset < flood.count { offset += stuck.sendWithoutWaiting(Array(flood[offset...])) }
            let status = try watcher.request("status")
            dropped = control(status)["clients_disconnected_slow"] as? Int == 1
            if !dropped { usleep(100_000) }
        }
        XCTAssertTrue(dropped, "the client that never reads is disconnected")
        // What it finally reads ends with the line saying why, then the connection closes.
        let lines = try XCTUnwrap(stuck.readToEnd(timeout: 30), "closed after its last line")
        let last = try parseJSONObject(try XCTUnwrap(lines.last))
        XCTAssertEqual(eventName(last), "Disconnected", "\(lines.suffix(3))")
        XCTAssertTrue((last["reason"] as? String)?.contains("does not read fast enough") == true, "\(last)")
        XCTAssertGreaterThan(last["dropped"] as? Int ?? 0, 0, "\(last)")

        // The player and the other client went on, and go on.
        let ends = try watcher.request("status")["ended"] as? Int ?? 0
        let seen = watcher.events.count
        var status: [String: Any] = [:]
        let later = Date().addingTimeInterval(60)
        repeat {
            status = try watcher.request("status")
            if status["ended"] as? Int ?? 0 < ends + 2 { usleep(50_000) }
        } while status["ended"] as? Int ?? 0 < ends + 2 && Date() < later
        XCTAssertGreaterThanOrEqual(status["ended"] as? Int ?? 0, ends + 2, "\(status)")
        XCTAssertGreaterThanOrEqual(
            watcher.events.dropFirst(seen).filter { $0.contains("MediaPlayerEndReached") }.count, 1,
            "the watcher still gets its events")
        XCTAssertEqual(control(status)["clients"] as? Int, 1, "only the watcher is left: \(status)")
        XCTAssertGreaterThan(control(status)["events_dropped"] as? Int ?? 0, 0, "\(status)")
        _ = try stop(daemon, socket: path)
    }

    func testControl_whenClientsAreKilledMidStreamOrLeaveMidReply_theDaemonGoesOn() throws {
        let (daemon, path) = try startDaemon([try TestMedia.wav(seconds: 0.3)], ["--loop"])
        _ = try ControlClient(path: path)  // the socket is up
        // A watcher process killed while events stream to it (progress events included).
        let watcher = try RunningProgram("media-events", ["ctl", "--socket", path, "watch"])
        XCTAssertNotNil(watcher.waitForLine(timeout: 30) { $0.contains(#""event":"MediaPlayerBuffering""#) })
        watcher.send(SIGKILL)
        _ = try watcher.finish(timeout: 30)
        // A client that sends many requests and closes before reading a single reply.
        for _ in 0..<3 {
            let leaving = try ControlClient(path: path)
            ok(try leaving.request("subscribe"))
            _ = leaving.sendWithoutWaiting(Array(String(repeating: #"{"command":"playlist"}"# + "\n", count: 500).utf8))
        }
        let client = try ControlClient(path: path)
        var status: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(30)
        repeat {
            status = try client.request("status")
            if control(status)["clients"] as? Int != 1 { usleep(50_000) }
        } while control(status)["clients"] as? Int != 1 && Date() < deadline
        XCTAssertEqual(control(status)["clients"] as? Int, 1, "the gone clients are forgotten: \(status)")
        ok(try client.request("subscribe", ["events": ["EndReached"]]))
        XCTAssertNotNil(
            client.waitForEvent(timeout: 60) { eventName($0) == "MediaPlayerEndReached" }, "playback goes on")
        let result = try stop(daemon, socket: path)
        XCTAssertEqual(result.stderr, "")
    }

    func testControl_whenAClientReadsLate_progressIsCoalescedAndStateEventsAreAllKept() throws {
        let (daemon, path) = try startDaemon([try TestMedia.wav(seconds: 0.3)], ["--loop", "--untimed"])
        let late = try ControlClient(path: path)
        ok(try late.request("subscribe", ["events": ["Buffering", "EndReached"]]))
        let other = try ControlClient(path: path)
        // Counted after the subscription: the ends from here on all reach the late client.
        let endedBefore = try other.request("status")["ended"] as? Int ?? 0
        // Not read until Buffering values have replaced each other and three entries have
        // ended since it subscribed (on a slow machine the first can come within one play,
        // each value replacing the last while the flush waits for the queue).
        func enough(_ status: [String: Any]) -> Bool {
            control(status)["events_coalesced"] as? Int ?? 0 >= 20 && status["ended"] as? Int ?? 0 >= endedBefore + 3
        }
        var status: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(90)
        repeat {
            status = try other.request("status")
            if !enough(status) { usleep(100_000) }
        } while !enough(status) && Date() < deadline
        XCTAssertTrue(enough(status), "20 coalesced, 3 ended since \(endedBefore): \(status)")
        XCTAssertEqual(control(status)["clients_disconnected_slow"] as? Int, 0, "under the bound: kept")
        // Now it reads: every EndReached the log has from its first to its last one.
        ok(try late.request("unsubscribe"))
        let result = try stop(daemon, socket: path)
        let received = late.events.compactMap { try? parseJSONObject($0) }
        let ends = received.filter { eventName($0) == "MediaPlayerEndReached" }.compactMap { $0["seq"] as? Int }
        let first = try XCTUnwrap(ends.first), last = try XCTUnwrap(ends.last)
        let logged = try result.jsonLines().filter { eventName($0) == "MediaPlayerEndReached" }
            .compactMap { $0["seq"] as? Int }.filter { (first...last).contains($0) }
        XCTAssertEqual(ends, logged, "state events are never dropped")
        XCTAssertGreaterThan(ends.count, 2)
        let buffering = received.filter { eventName($0) == "MediaPlayerBuffering" }.count
        let loggedBuffering = try result.jsonLines().filter {
            eventName($0) == "MediaPlayerBuffering" && ($0["seq"] as? Int).map { (first...last).contains($0) } == true
        }.count
        XCTAssertLessThan(buffering, loggedBuffering, "progress values were coalesced")
        XCTAssertEqual(
            received.compactMap { $0["seq"] as? Int }, received.compactMap { $0["seq"] as? Int }.sorted(),
            "still in the log's order")
    }

    // MARK: The socket file

    func testControl_whenTheSocketPathExists_replacesAStaleSocketAndRefusesAnythingElse() throws {
        let media = try TestMedia.wav(seconds: 30, sampleRate: 8000)
        let path = try testSocketPath()
        // A socket file nobody listens on, as a killed daemon leaves it.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertEqual(withUnixAddress(path) { bind(stale, $0, $1) }, 0)
        close(stale)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        let daemon = try RunningProgram("media-daemon", ["--control", path, "--no-progress", media.path])
        let client = try ControlClient(path: path)
        ok(try client.request("status"), "the stale socket was replaced")
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "only the daemon's user may connect")
        XCTAssertEqual(info.st_uid, getuid())

        // A second daemon on the same path: refused, the first one untouched.
        let second = try runProgram("media-daemon", ["--control", path, media.path], timeout: 30)
        XCTAssertEqual(second.status, 1)
        XCTAssertTrue(second.stderr.contains("another process is listening on it"), second.stderr)
        ok(try client.request("status"), "the first daemon still answers")
        _ = try stop(daemon, socket: path)

        // Any other file is left alone.
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: path))
        let refused = try runProgram("media-daemon", ["--control", path, media.path], timeout: 30)
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderrLines.count, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("exists and is not a socket"), refused.stderr)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "keep me\n")

        let tooLong = try runProgram(
            "media-daemon", ["--control", "/tmp/" + String(repeating: "x", count: 120), media.path],
            timeout: 30)
        XCTAssertEqual(tooLong.status, 2, tooLong.stderr)
    }

    // MARK: Exit

    func testControl_whenSIGTERMWithClientsConnected_exitsZeroWithin2sAndTheyGetTheLastLine() throws {
        let (daemon, path) = try startDaemon([try TestMedia.wav(seconds: 30, sampleRate: 8000)])
        let watchers = try (0..<4).map { _ in try ControlClient(path: path) }
        for watcher in watchers { ok(try watcher.request("subscribe")) }
        let idle = try ControlClient(path: path)
        let stuck = try ControlClient(path: path)
        ok(try stuck.request("subscribe"))
        _ = stuck.sendWithoutWaiting(Array(String(repeating: #"{"command":"status"}"# + "\n", count: 300).utf8))
        let playing = Date().addingTimeInterval(30)
        while try idle.request("status")["state"] as? String != "playing" && Date() < playing { usleep(50_000) }
        XCTAssertEqual(try idle.request("status")["state"] as? String, "playing")
        let sent = Date()
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 2)
        let seconds = Date().timeIntervalSince(sent)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertLessThan(seconds, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the socket file is removed at exit")
        for watcher in watchers {
            let lines = try XCTUnwrap(watcher.readToEnd(timeout: 10), "the connection is closed")
            let last = try parseJSONObject(try XCTUnwrap(lines.last ?? watcher.events.last))
            XCTAssertEqual(eventName(last), "Exited", "a reading client gets the log's last line")
            XCTAssertEqual(try result.jsonLines().last.flatMap { $0["seq"] as? Int }, last["seq"] as? Int)
        }
        XCTAssertNotNil(idle.readToEnd(timeout: 10), "closed")
        XCTAssertNotNil(stuck.readToEnd(timeout: 10), "closed")
    }

    /// Lines sent with `quit` in one write are answered in order, after the daemon began to
    /// exit: what would change playback or the playlist is refused, reads are answered, a
    /// second `quit` does not replace the first one's exit status.
    func testControl_afterQuit_refusesChangesAnswersReadsAndKeepsTheFirstStatus() throws {
        let media = try TestMedia.wav(seconds: 30, sampleRate: 8000)
        for round in 0..<3 {
            let (daemon, path) = try startDaemon([media])
            let client = try ControlClient(path: path)
            let playing = Date().addingTimeInterval(30)
            while try client.request("status")["state"] as? String != "playing" && Date() < playing { usleep(20_000) }
            let requests: [(Int, String)] = [
                (101, #"{"request_id":101,"command":["quit",3]}"#),
                (102, #"{"request_id":102,"command":"load","entries":["\#(media.path)"],"mode":"append"}"#),
                (103, #"{"request_id":103,"command":"next"}"#),
                (104, #"{"request_id":104,"command":"volume","volume":50}"#),
                (105, #"{"request_id":105,"command":"status"}"#),
                (106, #"{"request_id":106,"command":"playlist"}"#),
                (107, #"{"request_id":107,"command":"quit"}"#),
            ]
            try client.sendRaw(requests.map { $0.1 + "\n" }.joined())
            let lines = try XCTUnwrap(client.readToEnd(timeout: 10), "round \(round): the daemon closes the connection")
            var replies: [Int: [String: Any]] = [:]
            for line in lines {
                let object = try parseJSONObject(line)
                if let id = object["request_id"] as? Int { replies[id] = object }
            }
            XCTAssertEqual(replies[101]?["error"] as? String, "success", "round \(round): mpv's quit: \(lines)")
            for id in [102, 103, 104, 107] {
                let reply = try XCTUnwrap(replies[id], "round \(round): a reply to \(id): \(lines)")
                error(reply, contains: "the daemon is exiting")
            }
            let status = try XCTUnwrap(replies[105], "round \(round): \(lines)")
            ok(status, "round \(round): a read is answered")
            XCTAssertEqual(status["items"] as? Int, 1, "round \(round): nothing was loaded")
            ok(try XCTUnwrap(replies[106], "round \(round): \(lines)"))
            let result = try daemon.finish(timeout: 10)
            XCTAssertEqual(result.status, 3, "round \(round): the first quit's status: \(result.stderr)")
            let log = try result.jsonLines()
            XCTAssertEqual(log.filter { eventName($0) == "PlaybackBegan" }.count, 1, "round \(round)")
            XCTAssertEqual(log.filter { eventName($0) == "Loaded" }.count, 0, "round \(round)")
            XCTAssertEqual(log.last.flatMap(eventName), "Exited", "round \(round)")
        }
    }

    // MARK: media-events ctl

    func testCtl_statusNextWatch_asTheSessionInTheDocs() throws {
        let first = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "first.wav")
        let second = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "second.wav")
        let (daemon, path) = try startDaemon([first, second])
        _ = try ControlClient(path: path)
        let status = try runProgram("media-events", ["ctl", "--socket", path, "status"], timeout: 30)
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertEqual(status.stdoutLines.count, 1, status.stdout)
        let reply = try parseJSONObject(status.stdout)
        XCTAssertEqual(reply["request_id"] as? Int, 1)
        ok(reply)
        XCTAssertEqual(reply["items"] as? Int, 2)

        let watch = try RunningProgram(
            "media-events", ["ctl", "--socket", path, "watch", "PlaybackBegan,PlaybackEnded,Exited"])
        // Once watch has subscribed, the daemon counts one subscriber.
        let probe = try ControlClient(path: path)
        let deadline = Date().addingTimeInterval(30)
        while control(try probe.request("status"))["subscribers"] as? Int != 1 && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(control(try probe.request("status"))["subscribers"] as? Int, 1)
        let next = try runProgram("media-events", ["ctl", "--socket", path, "next"], timeout: 30)
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertEqual(
            next.stdout, #"{"request_id":1,"ok":true,"entry_id":2,"item":2,"entry":"\#(second.path)"}"# + "\n")
        let began = watch.waitForLine(timeout: 30) {
            $0.contains(#""event":"PlaybackBegan""#) && $0.contains(#""entry_id":2"#)
        }
        let beganFields = try parseJSONObject(try XCTUnwrap(began, watch.stdout + watch.stderr))
        XCTAssertEqual(beganFields["item"] as? Int, 2)
        XCTAssertEqual(beganFields["entry"] as? String, second.path)

        let third = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "third.wav")
        let loaded = try runProgram(
            "media-events", ["ctl", "--socket", path, "load", "--append", third.path], timeout: 30)
        XCTAssertEqual(loaded.status, 0, loaded.stderr)
        XCTAssertEqual(loaded.stdout, #"{"request_id":1,"ok":true,"items":3,"entry_ids":[3]}"# + "\n")
        let listed = try parseJSONObject(
            try runProgram("media-events", ["ctl", "--socket", path, "playlist"], timeout: 30).stdout)
        XCTAssertEqual(entries(listed), [first.path, second.path, third.path])

        let bad = try runProgram("media-events", ["ctl", "--socket", path, "seek", "1.5"], timeout: 30)
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("try 'media-events ctl --help'"), bad.stderr)
        let refused = try runProgram("media-events", ["ctl", "--socket", path, "play", "7"], timeout: 30)
        XCTAssertEqual(refused.status, 1, "an error reply")
        XCTAssertEqual(try parseJSONObject(refused.stdout)["ok"] as? Bool, false)
        let missing = try runProgram("media-events", ["ctl", "--socket", path + ".none", "status"], timeout: 30)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("cannot connect"), missing.stderr)

        // A listener that never answers: ctl gives up at its --timeout.
        let silentPath = try testSocketPath("silent.sock")
        let silent = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(silent) }
        XCTAssertEqual(withUnixAddress(silentPath) { bind(silent, $0, $1) }, 0)
        XCTAssertEqual(listen(silent, 4), 0)
        let unanswered = try runProgram(
            "media-events", ["ctl", "--socket", silentPath, "--timeout", "1", "status"], timeout: 30)
        XCTAssertEqual(unanswered.status, 1)
        XCTAssertTrue(unanswered.stderr.contains("no reply within 1.0 s"), unanswered.stderr)

        _ = try stop(daemon, socket: path)
        let watched = try watch.finish(timeout: 30)
        XCTAssertEqual(watched.status, 0, "watch ends when the daemon exits: \(watched.stderr)")
        let lines = try watched.jsonLines()
        XCTAssertEqual(
            lines.compactMap(eventName).filter { $0 != "PlaybackBegan" && $0 != "PlaybackEnded" }, ["Exited"],
            "only the events asked for: \(watched.stdout)")
        XCTAssertEqual(lines.filter { eventName($0) == "PlaybackEnded" }.last?["reason"] as? String, "quit")
    }

    func testHelp_whenControlAndCtl_describesThemAndTheirExitStatuses() throws {
        let daemonHelp = try runProgram("media-daemon", ["--help"], timeout: 30)
        XCTAssertEqual(daemonHelp.status, 0)
        for text in ["--control PATH", "$NOTIFY_SOCKET", "READY=1", "WATCHDOG=1", "the control socket cannot be"] {
            XCTAssertTrue(daemonHelp.stdout.contains(text), "'\(text)' in:\n\(daemonHelp.stdout)")
        }
        let overview = try runProgram("media-events", ["--help"], timeout: 30)
        XCTAssertTrue(overview.stdout.contains("media-events ctl --socket PATH COMMAND"), overview.stdout)
        let help = try runProgram("media-events", ["ctl", "--help"], timeout: 30)
        for command in [
            "play", "pause", "resume", "stop", "next", "previous", "seek", "volume", "load", "playlist",
            "status", "watch", "Exit status: 0",
        ] {
            XCTAssertTrue(help.stdout.contains(command), "'\(command)' in:\n\(help.stdout)")
        }
        let noSocket = try runProgram("media-events", ["ctl", "status"], timeout: 30)
        XCTAssertEqual(noSocket.status, 2)
        XCTAssertEqual(noSocket.stderrLines, ["media-events: ctl needs --socket PATH; try 'media-events ctl --help'"])
    }

    // MARK: systemd

    func testNotify_whenNOTIFY_SOCKET_sendsREADYStatusWatchdogAndSTOPPING() throws {
        let path = try testSocketPath("notify.sock")
        let listener = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        XCTAssertEqual(withUnixAddress(path) { bind(listener, $0, $1) }, 0)
        defer { close(listener) }
        let messages = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline {
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                let count = recv(listener, &buffer, buffer.count, 0)
                guard count > 0 else { continue }
                let message = String(decoding: buffer[0..<count], as: UTF8.self)
                messages.withLock { $0.append(message) }
                if message.contains("STOPPING=1") { break }
            }
            done.signal()
        }
        reader.start()
        let media = try TestMedia.wav(seconds: 30, sampleRate: 8000, name: "long.wav")
        let daemon = try RunningProgram(
            "media-daemon", ["--no-progress", media.path],
            environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"])
        func waitFor(_ predicate: ([String]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while !messages.withLock({ predicate($0) }) && Date() < deadline { usleep(20_000) }
            return messages.withLock { predicate($0) }
        }
        XCTAssertTrue(waitFor { $0.contains("READY=1") }, "READY=1: \(messages.withLock { $0 })")
        XCTAssertTrue(
            waitFor { $0.contains("STATUS=playing item 1 of 1: \(media.path)") },
            "STATUS per item: \(messages.withLock { $0 })")
        XCTAssertTrue(waitFor { $0.filter { $0 == "WATCHDOG=1" }.count >= 3 }, "WATCHDOG=1 every 0.1 s")
        XCTAssertNotNil(daemon.stdoutLines.first { $0.contains(#""event":"Started""#) })
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "STOPPING=1: \(messages.withLock { $0 })")
        let all = messages.withLock { $0 }
        let ready = try XCTUnwrap(all.firstIndex(of: "READY=1"))
        let stopping = try XCTUnwrap(all.firstIndex(of: "STOPPING=1"))
        XCTAssertLessThan(ready, stopping)
        XCTAssertEqual(all.filter { $0 == "READY=1" }.count, 1)
        XCTAssertTrue(
            all.allSatisfy { ["READY=1", "STOPPING=1", "WATCHDOG=1"].contains($0) || $0.hasPrefix("STATUS=") },
            "\(all)")
    }

    /// SIGTERM as soon as READY=1 arrives, as systemd may send it: never lost, however early
    /// (with dispatch signal sources, registered asynchronously, it was lost now and then and
    /// the daemon never stopped).
    func testNotify_whenSIGTERMRightAfterREADY_exitsZeroEachTime() throws {
        let media = try TestMedia.wav(seconds: 30, sampleRate: 8000)
        for run in 0..<10 {
            let path = try testSocketPath("notify.sock")
            let listener = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(listener) }
            XCTAssertEqual(withUnixAddress(path) { bind(listener, $0, $1) }, 0)
            let daemon = try RunningProgram(
                "media-daemon", ["--no-progress", media.path],
                environment: ["NOTIFY_SOCKET": path])
            var buffer = [UInt8](repeating: 0, count: 4096)
            var ready = false
            let deadline = Date().addingTimeInterval(30)
            while !ready && Date() < deadline {
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                let count = recv(listener, &buffer, buffer.count, 0)
                ready = count > 0 && String(decoding: buffer[0..<count], as: UTF8.self) == "READY=1"
            }
            XCTAssertTrue(ready, "run \(run)")
            daemon.send(SIGTERM)
            let result = try daemon.finish(timeout: 30)
            XCTAssertEqual(result.status, 0, "run \(run): \(result.stderr)")
            XCTAssertEqual(try result.jsonLines().last?["event"] as? String, "Exited", "run \(run)")
        }
    }

    /// `NOTIFY_SOCKET=@name`: an abstract socket (no file), as systemd may give.
    func testNotify_whenNOTIFY_SOCKETIsAbstract_sendsREADY() throws {
        let name = "mediaevents-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let listener = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        XCTAssertEqual(bound, 0, String(cString: strerror(errno)))
        let daemon = try RunningProgram(
            "media-daemon", ["--no-progress", try TestMedia.wav(seconds: 30, sampleRate: 8000).path],
            environment: ["NOTIFY_SOCKET": "@" + name])
        var buffer = [UInt8](repeating: 0, count: 4096)
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(30)
        while !messages.contains("READY=1") && Date() < deadline {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = recv(listener, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
        }
        XCTAssertTrue(messages.contains("READY=1"), "\(messages)")
        daemon.send(SIGTERM)
        XCTAssertEqual(try daemon.finish(timeout: 30).status, 0)
    }
}
