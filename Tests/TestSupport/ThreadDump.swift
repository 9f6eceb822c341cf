// Every thread's backtrace of this process, for a failure that says something is stuck: a
// wait that made no progress tells that work hangs, only the stacks tell on what.

import Foundation

/// The backtraces of every thread of this process, read by gdb attached to it (at most
/// `frames` frames a thread, Swift names demangled), or why there are none. Takes a few
/// seconds; meant for a failure message only.
public func threadDump(frames: Int = 30) -> String {
    let gdb = ["/usr/bin/gdb", "/usr/local/bin/gdb"].first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let gdb else { return "(no thread dump: gdb is not installed)" }
    let script = """
        '\(gdb)' -batch -q -nx -p \(getpid()) -ex 'set complaints 0' -ex 'set print frame-arguments none' \
          -ex 'thread apply all bt \(frames)' 2>&1 \
          | grep -E '^(Thread |#)' \
          | { command -v swift-demangle >/dev/null && swift-demangle --simplified || cat; }
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    process.arguments = ["120", "/bin/sh", "-c", script]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    do {
        try process.run()
    } catch {
        return "(no thread dump: \(error))"
    }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: output, as: UTF8.self)
    return text.isEmpty ? "(no thread dump: gdb printed nothing, exit status \(process.terminationStatus))" : text
}
