import Foundation
import Glibc
import TestSupport
import XCTest

/// `media-daemon --mqtt` on a Mosquitto broker of the test's own (Debian's `mosquitto` on a
/// free port of 127.0.0.1), watched and driven with Debian's `mosquitto_sub` and
/// `mosquitto_pub`: clients nobody here wrote. About 30 s for the whole class on a loaded
/// 2-core machine, most of it the ten daemons and the broker's restart.
final class MediaDaemonMQTTTests: XCTestCase {
    /// 30 s tones: the daemon plays in real time, so they outlast every test.
    private func tones(_ names: String...) throws -> [URL] {
        try names.enumerated().map { index, name in
            try TestMedia.wav(seconds: 30, sampleRate: 8000, frequency: 440 + 110 * Double(index), name: name)
        }
    }

    /// A daemon on `broker` as `id`, returned once its log says it is connected.
    private func startDaemon(
        _ broker: MQTTBroker, id: String, _ media: [URL], options: [String] = ["--no-progress"], line: UInt = #line
    ) throws -> RunningProgram {
        let daemon = try RunningProgram(
            "media-daemon",
            options + ["--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-id", id] + media.map(\.path))
        guard daemon.waitForLine(timeout: 30, { $0.contains("\"MQTTConnected\"") }) != nil else {
            daemon.send(SIGKILL)
            let result = try daemon.finish(timeout: 10)
            XCTFail("no MQTTConnected line: \(result.stdout)\(result.stderr)", line: line)
            throw ProgramFailure(description: "the daemon did not connect to the broker")
        }
        return daemon
    }

    /// Ends the daemon with SIGTERM: it exits 0.
    @discardableResult
    private func stop(_ daemon: RunningProgram, line: UInt = #line) throws -> ProgramResult {
        daemon.send(SIGTERM)
        let result = try daemon.finish(timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr, line: line)
        return result
    }

    /// The last status `id` published among `messages`.
    private func lastStatus(_ messages: [MQTTSubscriber.Message], _ id: String) -> [String: Any]? {
        messages.last { $0.topic == "media-daemon/\(id)/status" }?.json
    }

    /// The reply whose request_id is `requestID` (a string).
    private func reply(_ messages: [MQTTSubscriber.Message], _ id: String, _ requestID: String) -> [String: Any]? {
        messages.filter { $0.topic == "media-daemon/\(id)/reply" }.compactMap(\.json).first {
            $0["request_id"] as? String == requestID
        }
    }

    /// Every log line on the events topic, in order and without gaps; `next` over MQTT plays the
    /// next entry and its reply carries the request's id (native and mpv's forms); the retained
    /// status follows the playback, a newcomer gets it at once, and it ends `offline` at exit.
    func testEventsInOrderNextOverMQTTAndRetainedStatus() throws {
        let broker = try MQTTBroker()
        let watcher = try MQTTSubscriber(broker, topics: ["media-daemon/one/#"])
        let daemon = try startDaemon(broker, id: "one", try tones("a.wav", "b.wav"))
        XCTAssertTrue(
            watcher.waitFor(30) { messages in
                let status = self.lastStatus(messages, "one")
                return status?["player"] as? String == "playing" && status?["playback"] as? Int == 1
            }, "no online status of playback 1 playing: \(watcher.messages.map(\.payload))")
        try broker.publish("media-daemon/one/command", #"{"command":"next","request_id":"n-1"}"#)
        XCTAssertTrue(watcher.waitFor(30) { self.reply($0, "one", "n-1") != nil }, "no reply to next")
        XCTAssertEqual(reply(watcher.messages, "one", "n-1")?["ok"] as? Bool, true)
        XCTAssertTrue(
            watcher.waitFor(30) { messages in
                let status = self.lastStatus(messages, "one")
                return status?["player"] as? String == "playing" && status?["playback"] as? Int == 2
                    && status?["entry_id"] as? Int == 2 && status?["state"] as? String == "online"
            }, "the status did not follow next: \(watcher.objects("media-daemon/one/status"))")
        // mpv's form, answered in mpv's form with the request's id.
        try broker.publish("media-daemon/one/command", #"{"command":["get_property","pause"],"request_id":"m-2"}"#)
        XCTAssertTrue(watcher.waitFor(30) { self.reply($0, "one", "m-2") != nil }, "no reply to get_property")
        let mpv = reply(watcher.messages, "one", "m-2")
        XCTAssertEqual(mpv?["error"] as? String, "success")
        XCTAssertEqual(mpv?["data"] as? Bool, false)
        // Retained: a client that subscribes now gets the current status at once.
        let newcomer = try MQTTSubscriber(broker, topics: ["media-daemon/one/status"])
        XCTAssertTrue(
            newcomer.waitFor(10) { self.lastStatus($0, "one")?["playback"] as? Int == 2 },
            "no retained status: \(newcomer.messages.map(\.payload))")

        let result = try stop(daemon)
        XCTAssertTrue(
            watcher.waitFor(30) { messages in
                messages.contains { $0.topic == "media-daemon/one/events" && $0.payload.contains("\"Exited\"") }
                    && self.lastStatus(messages, "one")?["state"] as? String == "offline"
            }, "no Exited line and offline status: \(watcher.messages.suffix(5).map(\.payload))")
        // Its own offline status, not the broker's last will: the connection was closed cleanly.
        let offline = watcher.objects("media-daemon/one/status").filter { $0["state"] as? String == "offline" }
        XCTAssertEqual(offline.map { $0["reason"] as? String }, ["stopped"])
        // The same lines as the log, in its order: none lost, none repeated.
        let events = watcher.messages.filter { $0.topic == "media-daemon/one/events" }.map(\.payload)
        XCTAssertEqual(events, result.stdoutLines)
        let seqs = events.compactMap { try? parseJSONObject($0)["seq"] as? Int }
        XCTAssertEqual(seqs, Array(1...max(1, seqs.count)))
        let playbacks = watcher.objects("media-daemon/one/status").compactMap { $0["playback"] as? Int }
        XCTAssertEqual(playbacks, playbacks.sorted(), "the status went back to an older playback")
    }

    /// What is not a command gets an error reply, and the daemon goes on answering.
    func testMalformedOversizedAndUnsupportedCommandsGetErrorReplies() throws {
        let broker = try MQTTBroker()
        let watcher = try MQTTSubscriber(broker, topics: ["media-daemon/idle/reply"])
        let daemon = try startDaemon(broker, id: "idle", [])
        let cases: [(String, (([String: Any]) -> Bool))] = [
            ("garbage", { $0["error"] as? String == "malformed JSON" }),
            ("[1,2]", { $0["error"] as? String == "a request is a JSON object" }),
            (#"{"request_id":3}"#, { ($0["error"] as? String)?.contains("no \"command\"") == true }),
            (
                #"{"command":"frobnicate","request_id":4}"#,
                { $0["ok"] as? Bool == false && $0["request_id"] as? Int == 4 }
            ),
            (
                #"{"command":"subscribe","request_id":5}"#,
                { ($0["error"] as? String)?.contains("not over MQTT") == true }
            ),
            (
                #"{"command":"status","request_id":6,"pad":"\#(String(repeating: "x", count: 70_000))"}"#,
                { ($0["error"] as? String)?.contains("longer than 65536 bytes") == true }
            ),
            (
                #"{"command":["observe_property",1,"pause"],"request_id":7}"#,
                { $0["request_id"] as? Int == 7 && $0["error"] as? String != "success" }
            ),
            (#"{"command":"status","request_id":8}"#, { $0["ok"] as? Bool == true && $0["idle"] as? Bool == true }),
        ]
        for (index, (command, check)) in cases.enumerated() {
            try broker.publish("media-daemon/idle/command", command)
            XCTAssertTrue(
                watcher.waitFor(30) { $0.count > index }, "no reply to \(command.prefix(80))")
            let reply = watcher.messages.count > index ? watcher.messages[index].json : nil
            XCTAssertTrue(reply.map(check) ?? false, "\(command.prefix(80)): \(String(describing: reply))")
        }
        try stop(daemon)
    }

    /// A daemon killed with SIGKILL says nothing: the broker publishes its last will, and the
    /// retained status is `offline` for everyone who looks later.
    func testKilledDaemonTurnsOfflineThroughItsLastWill() throws {
        let broker = try MQTTBroker()
        let watcher = try MQTTSubscriber(broker, topics: ["media-daemon/+/status"])
        let daemon = try startDaemon(broker, id: "doomed", try tones("a.wav"))
        XCTAssertTrue(watcher.waitFor(30) { self.lastStatus($0, "doomed")?["player"] as? String == "playing" })
        daemon.send(SIGKILL)
        _ = try daemon.finish(timeout: 30)
        XCTAssertTrue(
            watcher.waitFor(30) { self.lastStatus($0, "doomed")?["state"] as? String == "offline" },
            "no offline status: \(watcher.messages.map(\.payload))")
        XCTAssertEqual(lastStatus(watcher.messages, "doomed")?["reason"] as? String, "lost")
        let later = try MQTTSubscriber(broker, topics: ["media-daemon/doomed/status"])
        XCTAssertTrue(later.waitFor(10) { self.lastStatus($0, "doomed")?["state"] as? String == "offline" })
    }

    /// The broker killed mid-play and started again on the same port: playback goes on, the
    /// daemon reconnects, and the lines written meanwhile arrive after the reconnect, in order,
    /// before the `MQTTConnected` line that counts what was coalesced. The restarted broker
    /// refuses the daemon (its password file lacks the daemon's user) until the operator's
    /// client has subscribed, so that nothing the daemon sends can come before.
    func testBrokerRestartMidPlayKeepsPlayingAndDeliversTheBacklog() throws {
        let daemonUser = ("daemon", "d-secret"), operatorUser = ("operator", "o-secret")
        let broker = try MQTTBroker(users: [daemonUser, operatorUser])
        let passwordFile = try TestMedia.directory(name: "secret").appendingPathComponent("mqtt-password")
        try Data("daemon:d-secret\n".utf8).write(to: passwordFile)
        let daemon = try startDaemon(
            broker, id: "fleet-1", try tones("a.wav"), options: ["--mqtt-password-file", passwordFile.path])
        XCTAssertNotNil(daemon.waitForLine(timeout: 30) { $0.contains("\"MediaPlayerTimeChanged\"") })

        broker.kill()
        XCTAssertNotNil(daemon.waitForLine(timeout: 30) { $0.contains("\"MQTTDisconnected\"") })
        daemon.send(SIGUSR1)
        let statusLine = daemon.waitForLine(timeout: 30) { $0.contains("\"event\":\"Status\"") }
        let statusSeq = try statusLine.map { try parseJSONObject($0)["seq"] as? Int } ?? nil
        XCTAssertNotNil(statusSeq)
        // Playback goes on while the broker is away: three more time lines after the Status line.
        let timesAfter = {
            daemon.stdoutLines.drop { !$0.contains("\"event\":\"Status\"") }.filter {
                $0.contains("\"MediaPlayerTimeChanged\"")
            }.count
        }
        XCTAssertTrue(waitUntil(30) { timesAfter() >= 3 }, "playback stopped while the broker was away")

        try broker.setUsers([operatorUser], reload: false)
        try broker.restart()
        let watcher = try MQTTSubscriber(broker, topics: ["media-daemon/fleet-1/events"], user: operatorUser)
        try broker.setUsers([daemonUser, operatorUser])
        let connected: ([MQTTSubscriber.Message]) -> [String: Any]? = { messages in
            messages.compactMap(\.json).first {
                $0["event"] as? String == "MQTTConnected" && $0["connection"] as? Int == 2
            }
        }
        XCTAssertTrue(watcher.waitFor(60) { connected($0) != nil }, "no reconnect: \(daemon.stdout.suffix(2000))")
        let result = try stop(daemon)
        XCTAssertFalse(
            result.stdoutLines.contains { $0.contains("\"PlaybackEnded\"") && !$0.contains("\"quit\"") },
            "a playback ended before the daemon was stopped")

        let received = watcher.objects("media-daemon/fleet-1/events")
        guard let announcement = connected(watcher.messages), let lastSeq = announcement["seq"] as? Int,
            let firstSeq = received.first?["seq"] as? Int
        else { return XCTFail("no MQTTConnected line") }
        let seqs = received.compactMap { $0["seq"] as? Int }.filter { $0 <= lastSeq }
        XCTAssertEqual(seqs, seqs.sorted(), "out of order")
        XCTAssertEqual(Set(seqs).count, seqs.count, "repeated")
        XCTAssertTrue(seqs.contains(statusSeq ?? -1), "the Status line written while away did not arrive")
        // Every state line of the log in that stretch arrived; only progress lines may be missing,
        // and no more than the announcement counts.
        let logged = try result.stdoutLines.map(parseJSONObject).filter {
            guard let seq = $0["seq"] as? Int else { return false }
            return seq >= firstSeq && seq <= lastSeq
        }
        let progress: Set = [
            "MediaPlayerTimeChanged", "MediaPlayerPositionChanged", "MediaPlayerBuffering", "MediaPlayerAudioVolume",
        ]
        let missing = logged.filter { !seqs.contains($0["seq"] as? Int ?? -1) }
        XCTAssertEqual(missing.filter { !progress.contains($0["event"] as? String ?? "") }.count, 0, "\(missing)")
        let declared = (announcement["dropped"] as? Int ?? 0) + (announcement["coalesced"] as? Int ?? 0)
        XCTAssertLessThanOrEqual(missing.count, declared, "\(missing.count) lines missing, \(declared) declared")
        XCTAssertGreaterThan(
            announcement["coalesced"] as? Int ?? 0, 0, "three time lines waited: two should have been coalesced")
    }

    /// Ten daemons on one broker: one operator's client subscribed to `media-daemon/+/status`
    /// sees all ten online, and one `mosquitto_pub` pauses one of them only.
    func testTenDaemonsOnOneBrokerOneOperatorSteersOne() throws {
        let broker = try MQTTBroker()
        let operatorClient = try MQTTSubscriber(broker, topics: ["media-daemon/+/status", "media-daemon/+/reply"])
        let tone = try tones("shop.wav")
        let ids = (0..<10).map { "screen-\($0)" }
        var daemons: [RunningProgram] = []
        defer { for daemon in daemons { daemon.send(SIGKILL) } }
        // Looping: the last one may connect long after the first began (ten daemons under a
        // sanitizer on two busy cores), and all ten must be seen playing at once.
        for id in ids { daemons.append(try startDaemon(broker, id: id, tone, options: ["--no-progress", "--loop"])) }
        XCTAssertTrue(
            operatorClient.waitFor(60) { messages in
                ids.allSatisfy { self.lastStatus(messages, $0)?["player"] as? String == "playing" }
            }, "not all ten playing: \(ids.map { lastStatus(operatorClient.messages, $0)?["player"] ?? "none" })")

        try broker.publish("media-daemon/screen-3/command", #"{"command":"pause","request_id":"p-3"}"#)
        XCTAssertTrue(operatorClient.waitFor(30) { self.reply($0, "screen-3", "p-3") != nil })
        XCTAssertEqual(reply(operatorClient.messages, "screen-3", "p-3")?["ok"] as? Bool, true)
        XCTAssertTrue(
            operatorClient.waitFor(30) { self.lastStatus($0, "screen-3")?["paused"] as? Bool == true },
            "screen-3 not paused: \(String(describing: lastStatus(operatorClient.messages, "screen-3")))")
        for id in ids where id != "screen-3" {
            XCTAssertEqual(lastStatus(operatorClient.messages, id)?["paused"] as? Bool, false, id)
        }
        XCTAssertFalse(
            operatorClient.messages.contains { $0.topic.hasSuffix("/reply") && !$0.topic.contains("screen-3") })

        for daemon in daemons { daemon.send(SIGTERM) }
        for daemon in daemons { XCTAssertEqual(try daemon.finish(timeout: 30).status, 0) }
        XCTAssertTrue(
            operatorClient.waitFor(30) { messages in
                ids.allSatisfy { self.lastStatus(messages, $0)?["reason"] as? String == "stopped" }
            },
            "not all ten offline (stopped): \(ids.map { lastStatus(operatorClient.messages, $0)?["reason"] ?? "none" })"
        )
    }

    /// An --mqtt URL that cannot be used exits 1 with a message naming the cause; the MQTT
    /// options need --mqtt (usage error, 2).
    func testUnusableMQTTOptionsExitWithTheirCause() throws {
        for (url, cause) in [
            ("http://broker:1883", "is not an mqtt:// or mqtts:// URL"), ("mqtt://broker:99999", "port 99999"),
            ("mqtt://:1883", "has no host"), ("mqtt://broker:x", "the port is not a number"),
        ] {
            let result = try runProgram("media-daemon", ["--mqtt", url, "--mqtt-id", "a"], timeout: 30)
            XCTAssertEqual(result.status, 1, url)
            XCTAssertTrue(result.stderr.contains(cause), "\(url): \(result.stderr)")
        }
        let missing = try runProgram(
            "media-daemon", ["--mqtt", "mqtt://127.0.0.1:1", "--mqtt-password-file", "/nonexistent/file"], timeout: 30)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("/nonexistent/file"), missing.stderr)
        let alone = try runProgram("media-daemon", ["--mqtt-id", "a", "x.wav"], timeout: 30)
        XCTAssertEqual(alone.status, 2)
        XCTAssertTrue(alone.stderr.contains("--mqtt-id needs --mqtt"), alone.stderr)
    }
}
