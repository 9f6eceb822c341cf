// Runs the real tools the tests compare the programs with (ffprobe) or check their output by
// (Debian's python3-jsonschema through Scripts/validate-json-lines.py), each with a deadline.

import Foundation
import Glibc
import TestSupport

/// The repository's root: this file is Tests/ExamplesTests/Support/Tools.swift.
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

extension Process {
    /// Runs `path` with `arguments` (its standard streams set by the caller) and signals
    /// `ended` when it exits; a program that cannot run is a failure that says which script
    /// installs it.
    func runPeer(_ path: String, _ arguments: [String], signalling ended: DispatchSemaphore) throws {
        executableURL = URL(fileURLWithPath: path)
        self.arguments = arguments
        terminationHandler = { _ in ended.signal() }
        do { try run() } catch {
            throw ProgramFailure(description: "\(path) cannot run (\(error)): Scripts/install-deps.sh installs it")
        }
    }
}

/// What a finished tool printed and how it exited.
struct ToolResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs `path` with `arguments`, `input` on its standard input; kills it and throws after
/// `timeout` seconds.
func runTool(_ path: String, _ arguments: [String], input: Data = Data(), timeout: Double = 60) throws -> ToolResult {
    let process = Process()
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    let ended = DispatchSemaphore(value: 0)
    try process.runPeer(path, arguments, signalling: ended)
    // Written and read on threads of their own: a tool that answers before reading all of
    // its input must not block on a full pipe.
    let collected = Locked((out: Data(), err: Data()))
    let done = DispatchGroup()
    for (handle, isOut) in [(stdout.fileHandleForReading, true), (stderr.fileHandleForReading, false)] {
        done.enter()
        Thread {
            let data = handle.readDataToEndOfFile()
            collected.withLock { if isOut { $0.out = data } else { $0.err = data } }
            done.leave()
        }.start()
    }
    Thread {
        try? stdin.fileHandleForWriting.write(contentsOf: input)
        try? stdin.fileHandleForWriting.close()
    }.start()
    if ended.wait(timeout: .now() + timeout) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        throw ProgramFailure(description: "\(path) \(arguments) did not exit within \(timeout) s")
    }
    _ = done.wait(timeout: .now() + 10)
    let (out, err) = collected.withLock { ($0.out, $0.err) }
    return ToolResult(
        status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
        stderr: String(decoding: err, as: UTF8.self))
}

/// The violations of `schema` (a file of Schemas/) by `lines` (JSON Lines), one per entry as
/// "LINE: PATH: MESSAGE"; empty when every line is valid. Throws when the validator cannot
/// run or a line is not JSON.
func schemaViolations(of lines: [String], schema: String) throws -> [String] {
    let result = try runTool(
        "/usr/bin/python3",
        [
            repositoryRoot.appendingPathComponent("Scripts/validate-json-lines.py").path,
            repositoryRoot.appendingPathComponent("Schemas/\(schema)").path,
        ],
        input: Data(lines.joined(separator: "\n").utf8))
    switch result.status {
    case 0: return []
    case 1: return result.stdout.split(separator: "\n").map(String.init)
    default:
        throw ProgramFailure(
            description: "the validator failed (status \(result.status)): \(result.stdout)\(result.stderr)"
                + " (Scripts/install-deps.sh installs python3-jsonschema)")
    }
}

/// ffprobe's report of `input` (format, streams and chapters) as JSON, with its status and
/// stderr: Debian's ffprobe, from the ffmpeg package.
func ffprobe(_ input: String) throws -> (status: Int32, report: [String: Any], stderr: String) {
    let result = try runTool(
        "/usr/bin/ffprobe",
        ["-v", "error", "-show_format", "-show_streams", "-show_chapters", "-of", "json", input])
    let report = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    return (result.status, report, result.stderr)
}
