// What the MPRIS tests share: a D-Bus daemon of the test's own (Debian's dbus-daemon, with a
// configuration written by the test), and the bus clients nobody here wrote (playerctl,
// dbus-send, dbus-monitor) run against it, each with a deadline and stopped by pid.

import Foundation
import Glibc
import TestSupport
import XCTest

/// A `dbus-daemon` of the test's own, listening in a fresh directory, stopped by `stop()` or
/// deinit. A session bus lets its user own any name; a system bus is configured as Debian's
/// (nobody owns a name or calls a method unless a policy says so), plus `policies`.
final class PrivateBus: @unchecked Sendable {
    // @unchecked: set once in init; `process` is only signalled and waited for.
    enum Kind: String {
        case session, system
    }

    let kind: Kind
    /// The address clients connect to (`unix:path=…,guid=…`).
    let address: String
    let directory: URL
    private let process = Process()
    private let ended = DispatchSemaphore(value: 0)

    init(_ kind: Kind = .session, policies: [String] = []) throws {
        self.kind = kind
        // Short: a socket's path has at most 107 bytes.
        var template = Array("/tmp/mdbus-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw ProgramFailure(description: "mkdtemp: \(String(cString: strerror(errno)))")
        }
        directory = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        var config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>\(kind.rawValue)</type>
              <listen>unix:dir=\(directory.path)</listen>
              <auth>EXTERNAL</auth>

            """
        switch kind {
        case .session:
            config += """
                  <policy context="default">
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                    <allow own="*"/>
                  </policy>

                """
        case .system:
            // Debian's /usr/share/dbus-1/system.conf, without what a test has no use for.
            config += """
                  <policy context="default">
                    <deny own="*"/>
                    <deny send_type="method_call"/>
                    <allow send_type="signal"/>
                    <allow send_requested_reply="true" send_type="method_return"/>
                    <allow send_requested_reply="true" send_type="error"/>
                    <allow receive_type="method_call"/>
                    <allow receive_type="method_return"/>
                    <allow receive_type="error"/>
                    <allow receive_type="signal"/>
                    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                    <allow send_destination="org.freedesktop.DBus"
                           send_interface="org.freedesktop.DBus.Introspectable"/>
                    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
                  </policy>

                """
        }
        for (index, policy) in policies.enumerated() {
            let file = directory.appendingPathComponent("policy-\(index).conf")
            try Data(policy.utf8).write(to: file)
            config += "  <include>\(file.path)</include>\n"
        }
        config += "</busconfig>\n"
        let configFile = directory.appendingPathComponent("bus.conf")
        try Data(config.utf8).write(to: configFile)

        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.runPeer(
            "/usr/bin/dbus-daemon", ["--config-file=\(configFile.path)", "--print-address", "--nofork"],
            signalling: ended)
        // The address is printed once the bus listens.
        let fd = out.fileHandleForReading.fileDescriptor
        var text = Data()
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = Date().addingTimeInterval(20)
        while !text.contains(UInt8(ascii: "\n")) && Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            text.append(contentsOf: buffer[0..<count])
        }
        let line = String(decoding: text, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard line.hasPrefix("unix:") else {
            kill(process.processIdentifier, SIGKILL)
            throw ProgramFailure(description: "dbus-daemon printed no address within 20 s: '\(line)'")
        }
        address = line
    }

    /// The environment variable that points sd-bus and the clients here.
    var environment: [String: String] {
        [kind == .session ? "DBUS_SESSION_BUS_ADDRESS" : "DBUS_SYSTEM_BUS_ADDRESS": address]
    }

    /// Suspends the bus (SIGSTOP): it reads and writes nothing until `resume()`, as a bus too
    /// slow to keep up.
    func suspend() { kill(process.processIdentifier, SIGSTOP) }

    func resume() { kill(process.processIdentifier, SIGCONT) }

    /// Stops the bus (SIGTERM) and waits for it to exit: every connection to it is closed.
    func stop() {
        guard process.isRunning else { return }
        resume()
        kill(process.processIdentifier, SIGTERM)
        if ended.wait(timeout: .now() + 10) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = ended.wait(timeout: .now() + 10)
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Clients

    /// Runs `playerctl` on this bus (session only: playerctl looks there).
    func playerctl(_ arguments: [String], timeout: Double = 15) throws -> ToolResult {
        try runClient("/usr/bin/playerctl", arguments, timeout: timeout)
    }

    /// Calls `method` of `interface` on the daemon named `destination` with `dbus-send`
    /// (`arguments` as it takes them: `int64:5`, `objpath:/…`), printing the reply.
    func send(
        _ destination: String, _ interface: String, _ method: String, _ arguments: [String] = [], timeout: Double = 15
    ) throws -> ToolResult {
        try runClient(
            "/usr/bin/dbus-send",
            [
                "--bus=\(address)", "--print-reply", "--reply-timeout=10000", "--dest=\(destination)",
                "/org/mpris/MediaPlayer2",
                "\(interface).\(method)",
            ] + arguments, timeout: timeout)
    }

    /// `org.freedesktop.DBus.Properties.Get` of `property` of `org.mpris.MediaPlayer2.Player`.
    func property(_ destination: String, _ property: String, interface: String = "org.mpris.MediaPlayer2.Player")
        throws -> ToolResult
    {
        try send(destination, "org.freedesktop.DBus.Properties", "Get", ["string:\(interface)", "string:\(property)"])
    }

    /// Runs `path` with the bus's environment, with a deadline.
    func runClient(_ path: String, _ arguments: [String], timeout: Double = 15) throws -> ToolResult {
        let client = try BusClient(path, arguments, environment: environment)
        return try client.finish(timeout: timeout)
    }
}

/// A bus client run to its end, or running on (`playerctl --follow`, `dbus-monitor`) with its
/// output read line by line until the test stops it by pid.
final class BusClient: @unchecked Sendable {
    // @unchecked: the output is behind a lock; the process is set once in init.
    private let process = Process()
    private let output = Locked((out: Data(), err: Data(), open: 2))
    private let ended = DispatchSemaphore(value: 0)
    private let closed = DispatchSemaphore(value: 0)

    init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.runPeer(path, arguments, signalling: ended)
        for (handle, isOut) in [(out.fileHandleForReading, true), (err.fileHandleForReading, false)] {
            Thread { [output, closed] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    output.withLock { if isOut { $0.out.append(chunk) } else { $0.err.append(chunk) } }
                }
                let last = output.withLock { output -> Bool in
                    output.open -= 1
                    return output.open == 0
                }
                if last { closed.signal() }
            }.start()
        }
    }

    var stdout: String { String(decoding: output.withLock { $0.out }, as: UTF8.self) }

    /// The complete lines written so far.
    var lines: [String] {
        let text = stdout
        let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
        return complete.split(separator: "\n").map(String.init)
    }

    /// Waits until the lines satisfy `predicate`; returns whether they did within `timeout`.
    func waitForLines(timeout: Double, _ predicate: ([String]) -> Bool) -> Bool {
        waitUntil(timeout) { predicate(lines) }
    }

    /// Waits for the client to exit; kills it after `timeout` seconds (a failure).
    func finish(timeout: Double) throws -> ToolResult {
        if ended.wait(timeout: .now() + timeout) == .timedOut {
            stop()
            throw ProgramFailure(
                description:
                    "\(process.executableURL?.path ?? "") \(process.arguments ?? []) did not exit within \(timeout) s")
        }
        _ = closed.wait(timeout: .now() + 10)
        let (out, err) = output.withLock { ($0.out, $0.err) }
        return ToolResult(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }

    /// Stops a client that runs on (SIGTERM, then SIGKILL) and waits for it.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if ended.wait(timeout: .now() + 5) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = ended.wait(timeout: .now() + 5)
        }
    }

    deinit { stop() }
}
