// What the MQTT tests share: a Mosquitto broker of the test's own (Debian's `mosquitto`, on a
// free port of 127.0.0.1, with a configuration written by the test), and the clients nobody
// here wrote (`mosquitto_sub`, `mosquitto_pub`) run against it, each with a deadline and
// stopped by pid.

import Foundation
import Glibc
import TestSupport
import XCTest

/// A `mosquitto` broker of the test's own on 127.0.0.1, in-memory only (persistence off);
/// stopped by `kill()`/`stop()` or deinit. With `users`, clients must give a user and password
/// from that list (`setUsers` changes it and makes the broker reload it).
final class MQTTBroker: @unchecked Sendable {
    // @unchecked: `process` is replaced only by the test's thread (`restart`), under `lock`.
    let directory: URL
    private(set) var port: Int32 = 0
    private let users: Bool
    private let lock = Locked<(process: Process, ended: DispatchSemaphore)?>(nil)

    init(users: [(String, String)]? = nil) throws {
        directory = try TestMedia.directory(name: "mqtt")
        self.users = users != nil
        if let users { try setUsers(users, reload: false) }
        // A port found free may be taken by another process before the broker binds it: retry.
        for attempt in 1...5 {
            port = try Self.freePort()
            if try start() { return }
            if attempt == 5 { break }
        }
        throw ProgramFailure(description: "mosquitto could not listen on a free port in 5 attempts")
    }

    /// A port of 127.0.0.1 free now: bound to port 0, read back, closed.
    private static func freePort() throws -> Int32 {
        Int32(try LocalHTTPServer.closedPort())
    }

    /// Starts mosquitto on `port`; `false` when it exits before it listens (the port is taken).
    private func start() throws -> Bool {
        var config = "listener \(port) 127.0.0.1\npersistence false\n"
        if users {
            config += "allow_anonymous false\npassword_file \(directory.appendingPathComponent("passwords").path)\n"
        } else {
            config += "allow_anonymous true\n"
        }
        let configFile = directory.appendingPathComponent("mosquitto.conf")
        try Data(config.utf8).write(to: configFile)
        let process = Process()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        try process.runPeer("/usr/sbin/mosquitto", ["-c", configFile.path], signalling: ended)
        lock.withLock { $0 = (process, ended) }
        // Listening once a TCP connection to the port succeeds; gone if the process exits.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if !process.isRunning { return false }
            if Self.accepts(port) { return true }
            usleep(20_000)
        }
        kill()
        throw ProgramFailure(description: "mosquitto did not listen on port \(port) within 20 s")
    }

    private static func accepts(_ port: Int32) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Writes the password file (`mosquitto_passwd`); with `reload`, the broker re-reads it
    /// (SIGHUP).
    func setUsers(_ users: [(String, String)], reload: Bool = true) throws {
        let file = directory.appendingPathComponent("passwords")
        try? FileManager.default.removeItem(at: file)
        try Data().write(to: file)
        for (user, password) in users {
            let result = try runTool("/usr/bin/mosquitto_passwd", ["-b", file.path, user, password], timeout: 30)
            guard result.status == 0 else {
                throw ProgramFailure(description: "mosquitto_passwd: \(result.stderr)")
            }
        }
        if reload, let process = lock.withLock({ $0?.process }) { Glibc.kill(process.processIdentifier, SIGHUP) }
    }

    /// Kills the broker (SIGKILL: no goodbye to its clients) and waits for its exit.
    func kill() {
        guard let (process, ended) = lock.withLock({ $0 }) else { return }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        _ = ended.wait(timeout: .now() + 10)
        lock.withLock { $0 = nil }
    }

    /// Starts the broker again on the same port (retried while the port is not free yet).
    func restart() throws {
        kill()
        for _ in 1...20 {
            if try start() { return }
            usleep(100_000)
        }
        throw ProgramFailure(description: "mosquitto could not listen on port \(port) again")
    }

    deinit {
        kill()
    }

    /// `mosquitto_pub` of `message` (QoS 1) to `topic`; fails the test when it fails.
    func publish(_ topic: String, _ message: String, user: (String, String)? = nil, line: UInt = #line) throws {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic]
        if message.utf8.count > 32 * 1024 {
            let file = try TestMedia.directory(name: "message").appendingPathComponent("payload")
            try Data(message.utf8).write(to: file)
            arguments += ["-f", file.path]
        } else {
            arguments += ["-m", message]
        }
        if let user { arguments += ["-u", user.0, "-P", user.1] }
        let result = try runTool("/usr/bin/mosquitto_pub", arguments, timeout: 30)
        XCTAssertEqual(result.status, 0, "mosquitto_pub \(topic): \(result.stderr)", line: line)
    }
}

/// `mosquitto_sub -v` on some topics of `broker` (QoS 1), its messages collected as they come;
/// subscribed once `init` returns (a probe message of its own came back). Killed at deinit.
final class MQTTSubscriber: @unchecked Sendable {
    // @unchecked: `process` is only signalled and waited for; the lines are under `messages`.
    struct Message {
        let topic: String
        let payload: String
        /// The payload as a JSON object, if it is one.
        var json: [String: Any]? { try? parseJSONObject(payload) }
    }

    private static let probeTopic = "mqtt-test/probe"
    private let process = Process()
    private let ended = DispatchSemaphore(value: 0)
    private let collected = Locked((messages: [Message](), partial: ""))

    init(_ broker: MQTTBroker, topics: [String], user: (String, String)? = nil) throws {
        var arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-v", "-q", "1", "-t", Self.probeTopic]
        for topic in topics { arguments += ["-t", topic] }
        if let user { arguments += ["-u", user.0, "-P", user.1] }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.runPeer("/usr/bin/mosquitto_sub", arguments, signalling: ended)
        let handle = out.fileHandleForReading
        let collected = collected
        Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                collected.withLock { state in
                    state.partial += String(decoding: chunk, as: UTF8.self)
                    while let newline = state.partial.firstIndex(of: "\n") {
                        let line = state.partial[..<newline]
                        state.partial = String(state.partial[state.partial.index(after: newline)...])
                        guard let space = line.firstIndex(of: " ") else { continue }
                        state.messages.append(
                            Message(
                                topic: String(line[..<space]), payload: String(line[line.index(after: space)...])))
                    }
                }
            }
        }.start()
        // Subscribed once a probe published after the start comes back (mosquitto_sub prints
        // nothing else without buffering it).
        var subscribed = false
        for _ in 1...20 where !subscribed {
            try broker.publish(Self.probeTopic, "probe", user: user)
            subscribed = waitUntil(1) { collected.withLock { $0.messages.contains { $0.topic == Self.probeTopic } } }
        }
        guard subscribed else {
            stop()
            throw ProgramFailure(description: "mosquitto_sub \(topics) did not subscribe within 20 s")
        }
    }

    /// The messages so far, probes left out.
    var messages: [Message] { collected.withLock { $0.messages }.filter { $0.topic != Self.probeTopic } }

    /// The messages of `topic`, as JSON objects.
    func objects(_ topic: String) -> [[String: Any]] { messages.filter { $0.topic == topic }.compactMap(\.json) }

    /// Waits until the messages satisfy `condition` (`timeout` seconds at most).
    func waitFor(_ timeout: Double, _ condition: ([Message]) -> Bool) -> Bool {
        waitUntil(timeout) { condition(messages) }
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        if ended.wait(timeout: .now() + 10) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = ended.wait(timeout: .now() + 10)
        }
    }

    deinit {
        stop()
    }
}
