// Runs the example programs as a user would: the built binary in a child process, its output
// read through pipes, and every wait bounded so that a hang fails the test instead of CI.

import Foundation
import Glibc
import TestSupport
import XCTest

/// The products directory of this build (where `swift build` puts `media-events`): the
/// test bundle is built into the same directory.
func productPath(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let bundle = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    var directory = bundle.deletingLastPathComponent()
    // On Linux the test runner is the .xctest file itself; elsewhere it sits inside a bundle.
    while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
        directory.deleteLastPathComponent()
    }
    let path = directory.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw ProgramFailure(
            description: "\(path) is missing: build the products first (`swift build`, as `make test` does)")
    }
    return path
}

struct ProgramFailure: Error, CustomStringConvertible {
    let description: String
}

/// What a finished program printed and how it exited.
struct ProgramResult {
    let status: Int32
    let stdout: String
    let stderr: String

    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// Every stdout line parsed as a JSON object; throws on the first line that is not one.
    func jsonLines() throws -> [[String: Any]] {
        try stdoutLines.map(parseJSONObject)
    }
}

func parseJSONObject(_ line: String) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw ProgramFailure(description: "not a JSON object: \(line)")
    }
    return object
}

/// A running example program with its standard output collected line by line.
final class RunningProgram: @unchecked Sendable {
    // @unchecked: the mutable state is in `state` (a lock); the rest is set once in init.
    private struct State {
        var stdout = Data()
        var stderr = Data()
        var openPipes = 2
    }

    let process = Process()
    private let state = Locked(State())
    private let ended = DispatchSemaphore(value: 0)
    private let pipesClosed = DispatchSemaphore(value: 0)

    /// Starts `name`; its standard output goes to `standardOutput` when given (such as
    /// /dev/full), otherwise to a pipe read into `stdout`.
    /// With `shellScript`, `/bin/sh -c shellScript PROGRAM arguments…` runs instead: the way to
    /// give the program arguments that are not UTF-8 (`Process` takes Strings only).
    /// `environment` is added to (and overrides) the test process's environment.
    init(
        _ name: String, _ arguments: [String], standardOutput: FileHandle? = nil, shellScript: String? = nil,
        environment: [String: String] = [:]
    ) throws {
        if let shellScript {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellScript, try productPath(name)] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: try productPath(name))
            process.arguments = arguments
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = standardOutput ?? out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // ThreadSanitizer sleeps 1 s (its `atexit_sleep_ms`) in the exit of every process with
        // threads; the tests that bound how long a program takes to end would count it.
        var inherited = ProcessInfo.processInfo.environment
        inherited["TSAN_OPTIONS"] = [inherited["TSAN_OPTIONS"], "atexit_sleep_ms=0"].compactMap { $0 }.joined(
            separator: " ")
        process.environment = inherited.merging(environment) { $1 }
        let ended = ended
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        if standardOutput == nil {
            read(out.fileHandleForReading, isStdout: true)
        } else {
            state.withLock { $0.openPipes -= 1 }
        }
        read(err.fileHandleForReading, isStdout: false)
    }

    private func read(_ handle: FileHandle, isStdout: Bool) {
        let thread = Thread { [state, pipesClosed] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                state.withLock { state in
                    if isStdout { state.stdout.append(chunk) } else { state.stderr.append(chunk) }
                }
            }
            let last = state.withLock { state -> Bool in
                state.openPipes -= 1
                return state.openPipes == 0
            }
            if last { pipesClosed.signal() }
        }
        thread.start()
    }

    var stdout: String { String(decoding: state.withLock { $0.stdout }, as: UTF8.self) }
    var stderr: String { String(decoding: state.withLock { $0.stderr }, as: UTF8.self) }
    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Sends `signal` to the program.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits until a complete stdout line satisfies `predicate`; returns it, or `nil` after
    /// `timeout` seconds.
    func waitForLine(timeout: Double, after skipping: Int = 0, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let text = stdout
            // Only lines that ended with a newline are complete.
            let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
            let lines = complete.split(separator: "\n").map(String.init)
            if let match = lines.dropFirst(skipping).first(where: predicate) { return match }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    /// Waits for the program to exit and its pipes to close; kills it after `timeout` seconds.
    func finish(timeout: Double) throws -> ProgramResult {
        if ended.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = ended.wait(timeout: .now() + 10)
            throw ProgramFailure(
                description: "\(process.executableURL?.lastPathComponent ?? "program") "
                    + "\(process.arguments ?? []) did not exit within \(timeout) s; output so far:\n\(stdout)\n\(stderr)"
            )
        }
        _ = pipesClosed.wait(timeout: .now() + 10)
        let result = ProgramResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
        Self.failOnSanitizerReport(result.stderr, of: process.executableURL?.lastPathComponent ?? "program")
        return result
    }

    /// A sanitized build's report in a program's own stderr is a failure of the test that ran
    /// it, with the report: the program's exit status alone (ThreadSanitizer's 66) names no
    /// race.
    private static func failOnSanitizerReport(_ stderr: String, of name: String) {
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        guard
            let start = lines.firstIndex(where: {
                $0.contains("WARNING: ThreadSanitizer") || $0.contains("ERROR: AddressSanitizer")
            })
        else { return }
        XCTFail("\(name) reported:\n" + lines[start...].prefix(120).joined(separator: "\n"))
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// Runs `name` with `arguments` to its end, killing it after `timeout` seconds (a failure).
func runProgram(
    _ name: String, _ arguments: [String], timeout: Double = 90,
    standardOutput: FileHandle? = nil, environment: [String: String] = [:]
) throws -> ProgramResult {
    try RunningProgram(name, arguments, standardOutput: standardOutput, environment: environment).finish(
        timeout: timeout)
}

/// Runs `name` with its standard output into a pipe, reads `lines` lines from it and closes
/// the pipe, as `… | head -3` does; returns how the program ended and the seconds it took to
/// end after the close. Kills it after `timeout` seconds (a failure).
func runClosingOutputEarly(
    _ name: String, _ arguments: [String], afterLines lines: Int,
    timeout: Double = 30
) throws -> (result: ProgramResult, secondsAfterClose: Double) {
    let out = Pipe()
    let program = try RunningProgram(name, arguments, standardOutput: out.fileHandleForWriting)
    // The child has its copy: without closing ours, the pipe never breaks.
    try out.fileHandleForWriting.close()
    let fd = out.fileHandleForReading.fileDescriptor
    var text = Data()
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while text.filter({ $0 == UInt8(ascii: "\n") }).count < lines && Date() < deadline {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 100) > 0 else { continue }
        let count = read(fd, &buffer, buffer.count)
        if count <= 0 { break }
        text.append(contentsOf: buffer[0..<count])
    }
    try out.fileHandleForReading.close()
    let closed = Date()
    let result = try program.finish(timeout: max(1, deadline.timeIntervalSinceNow))
    return (
        ProgramResult(status: result.status, stdout: String(decoding: text, as: UTF8.self), stderr: result.stderr),
        Date().timeIntervalSince(closed)
    )
}

/// Where each thread of process `pid` is, innermost frames first: the evidence a wedge leaves
/// (read with gdb when it is installed; at most 30 s). One line per thread: its name, then its
/// top frames' functions.
func threadDump(of pid: Int32) -> String {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return "(no gdb to read the threads)" }
    let gdb = Process()
    gdb.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    gdb.arguments = ["30", "/usr/bin/gdb", "-p", "\(pid)", "-batch", "-nx", "-ex", "thread apply all bt 12"]
    let out = Pipe()
    gdb.standardOutput = out
    gdb.standardError = FileHandle.nullDevice
    do { try gdb.run() } catch { return "(gdb did not start: \(error))" }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    gdb.waitUntilExit()
    var threads: [String] = []
    for line in text.split(separator: "\n") {
        if line.hasPrefix("Thread ") {
            // `Thread 3 (Thread 0x7f… (LWP 123) "media-daemon.po"):` → its name.
            threads.append(line.split(separator: "\"").dropFirst().first.map { "[\($0)]" } ?? "[?]")
        } else if line.hasPrefix("#"), !threads.isEmpty {
            // `#2  0x… in function (args) at file:line` or `#0  function (…)`: the function.
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            let name =
                words.firstIndex(of: "in").map { words.index(after: $0) }.flatMap {
                    words.indices.contains($0) ? words[$0] : nil
                }
                ?? (words.count > 1 ? words[1] : "?")
            threads[threads.count - 1] += " \(name)"
        }
    }
    return threads.isEmpty ? "(gdb read no threads: \(text.suffix(300)))" : threads.joined(separator: "\n")
}
